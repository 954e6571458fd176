#pragma once
// Input errors. Library code throws; only main() catches, prints the message and exits with
// status 2. The message is complete: where (file, line, key or row), the value, what is allowed.
#include <stdexcept>
#include <string>

namespace servesim {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace servesim
