#pragma once
// Text helpers for tests that compare what servesim prints (kept apart from tests/support.h,
// which nearly every test includes).
#include <string>

namespace servesim::test {

/// `s` with every occurrence of `from` written as `to`.
inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

}  // namespace servesim::test
