#include "core/errors.h"

#include <fmt/format.h>

namespace servesim {
namespace {

/// Length of the valid UTF-8 sequence starting at s[i] (2 to 4), or 0 if there is none. Rejects
/// overlong forms, surrogates and code points above U+10FFFF; `cp` receives the code point.
size_t utf8_length(std::string_view s, size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  // The lead byte gives the length, its payload bits and the smallest code point that needs it.
  struct Lead {
    unsigned char lo, hi, mask;
    size_t n;
    char32_t min;
  };
  static constexpr Lead k_leads[] = {
      {0xC2, 0xDF, 0x1F, 2, 0x80}, {0xE0, 0xEF, 0x0F, 3, 0x800}, {0xF0, 0xF4, 0x07, 4, 0x10000}};
  const Lead* lead = nullptr;
  for (const Lead& l : k_leads)
    if (b0 >= l.lo && b0 <= l.hi) lead = &l;
  if (lead == nullptr) return 0;
  const size_t n = lead->n;
  const char32_t min = lead->min;
  cp = b0 & lead->mask;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

/// C1 controls and the characters that reorder or hide text (Trojan Source, CVE-2021-42574).
bool invisible(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x200E || cp == 0x200F || cp == 0x061C ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

/// Appends the escaped form of at most `max_chars` characters of `text`; true if it cut.
bool escape(std::string_view text, size_t max_chars, std::string& out) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++chars) {
    if (chars == max_chars) return true;
    const auto b = static_cast<unsigned char>(text[i]);
    char32_t cp = 0;
    const size_t n = b >= 0x80 ? utf8_length(text, i, cp) : 0;
    if (b == '\\' || b == '"') {
      out += '\\';
      out += static_cast<char>(b);
    } else if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b);
    } else if (n > 0 && !invisible(cp)) {
      out.append(text.substr(i, n));
    } else if (n > 0) {
      out += fmt::format("\\u{{{:04X}}}", static_cast<uint32_t>(cp));
    } else {
      out += fmt::format("\\x{:02X}", b);
    }
    i += n > 0 ? n : 1;
  }
  return false;
}

}  // namespace

std::string clean_message(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    char32_t cp = 0;
    const size_t n = b >= 0x80 ? utf8_length(text, i, cp) : 0;
    if ((b >= 0x20 && b < 0x7F) || b == '\n' || b == '\t') {
      out += static_cast<char>(b);
    } else if (n > 0 && !invisible(cp)) {
      out.append(text.substr(i, n));
    } else {
      for (size_t k = 0; k < (n > 0 ? n : 1); ++k)
        out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i + k]));
    }
    i += n > 0 ? n : 1;
  }
  return out;
}

InputError::InputError(const std::string& what) : std::runtime_error(clean_message(what)) {}

std::string printable(std::string_view text, size_t max_chars) {
  std::string out;
  if (escape(text, max_chars, out)) out += "...";
  return out;
}

std::string quote_input(std::string_view text, size_t max_chars) {
  std::string out = "\"";
  const bool cut = escape(text, max_chars, out);
  out += '"';
  if (cut) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

}  // namespace servesim
