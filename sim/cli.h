#pragma once
// The servesim command line. run_cli() is main() without the process: tests call it directly.
// Exit status: 0 success, 2 bad input or usage (with a message on `err`), 1 internal error.
#include <iosfwd>
#include <string>
#include <vector>

namespace servesim {

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace servesim
