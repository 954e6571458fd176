#pragma once
// What every fuzz harness checks besides "no crash": an InputError's message is short, starts
// where it should (the trace's name, "--set"), and carries no raw control characters or invalid
// UTF-8 (input echoed into it must go through servesim::printable()). A failed check aborts, which
// libFuzzer reports as a finding with the input that caused it.
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace servesim::fuzz {

[[noreturn]] inline void finding(const char* what, std::string_view detail) {
  std::fprintf(stderr, "FINDING: %s: %.*s\n", what,
               static_cast<int>(detail.size() > 2000 ? 2000 : detail.size()), detail.data());
  std::abort();
}

/// REQUIRES nothing; aborts if `msg` is not a clean one-line message starting with `prefix`.
inline void check_message(std::string_view msg, std::string_view prefix) {
  if (msg.substr(0, prefix.size()) != prefix)
    finding("message does not start with the file name", msg);
  if (msg.size() > 4096) finding("message longer than 4096 bytes", msg);
  for (size_t i = 0; i < msg.size();) {
    const auto b = static_cast<unsigned char>(msg[i]);
    if (b < 0x20 || b == 0x7F) finding("raw control character in message", msg);
    if (b < 0x80) {
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (checked loosely: lead byte, then continuation bytes).
    const size_t n = b >= 0xF0 && b <= 0xF4   ? 4
                     : b >= 0xE0 && b <= 0xEF ? 3
                     : b >= 0xC2 && b <= 0xDF ? 2
                                              : 0;
    if (n == 0 || i + n > msg.size()) finding("invalid UTF-8 in message", msg);
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(msg[i + k]) & 0xC0u) != 0x80u)
        finding("invalid UTF-8 in message", msg);
    i += n;
  }
}

}  // namespace servesim::fuzz
