#pragma once
// Input errors. Library code throws; only main() catches, prints the message and exits with
// status 2. The message is complete: where (file, line, key or row), the value, what is allowed.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace servesim {

/// The message is passed through clean_message(), a backstop for input that reached it without
/// printable(): bytes that are not valid UTF-8 and control characters other than a newline are
/// written as \xNN, so no message can garble the terminal even where a call site forgot.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what);
};

/// `text` with every byte that is not printable ASCII, a newline, a tab or part of a valid UTF-8
/// character written as \xNN; valid text comes back unchanged (backslashes are not escaped).
[[nodiscard]] std::string clean_message(std::string_view text);

/// Text from the input made safe to print in a message: at most `max_chars` characters (then
/// "..."), valid UTF-8 kept, and every other byte -- control characters, DEL, bytes that are not
/// valid UTF-8 -- written as \xNN (bidirectional-text controls as \u{NNNN}), so that hostile
/// input can neither flood nor garble the terminal. Backslashes and double quotes are escaped.
[[nodiscard]] std::string printable(std::string_view text, size_t max_chars = 40);
/// printable() in double quotes; a cut value is followed by its size: "1234..." (5000 bytes).
[[nodiscard]] std::string quote_input(std::string_view text, size_t max_chars = 40);

}  // namespace servesim
