#include "core/yaml_chars.h"

#include <fmt/format.h>

#include <array>
#include <vector>

namespace servesim {
namespace {

struct Known {
  std::string_view bytes;
  const char* what;
};

// The invisible characters, as UTF-8 bytes, with their names in messages.
constexpr std::array<Known, 11> k_known{{
    {"\t", "a tab character"},
    {"\xC2\xA0", "a non-breaking space (U+00A0)"},
    {"\xE2\x80\x87", "a figure space (U+2007)"},
    {"\xE2\x80\xAF", "a narrow non-breaking space (U+202F)"},
    {"\xE3\x80\x80", "an ideographic space (U+3000)"},
    {"\xE2\x80\x8B", "a zero-width space (U+200B)"},
    {"\xE2\x80\x8C", "a zero-width non-joiner (U+200C)"},
    {"\xE2\x80\x8D", "a zero-width joiner (U+200D)"},
    {"\xE2\x81\xA0", "a word joiner (U+2060)"},
    {"\xEF\xBB\xBF", "a byte-order mark (U+FEFF)"},
    {"\xC2\xAD", "a soft hyphen (U+00AD)"},
}};

/// The lines of `text` without their line ends, and the offset each starts at.
std::vector<std::pair<size_t, std::string_view>> lines_of(std::string_view text) {
  std::vector<std::pair<size_t, std::string_view>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.emplace_back(start, line);
    if (end == text.size()) break;
    start = end + 1;
  }
  return out;
}

/// The first invisible character of `line`; with `indent_tabs_only`, a tab counts only in the
/// line's indent (a tab between a key and its value is valid YAML).
std::optional<InvisibleChar> on_line(size_t offset, std::string_view line, int number,
                                     bool indent_tabs_only) {
  int column = 1;
  bool indent = true;
  for (size_t i = 0; i < line.size();) {
    for (const Known& k : k_known) {
      if (line.substr(i, k.bytes.size()) != k.bytes) continue;
      if (offset + i == 0 && k.bytes == "\xEF\xBB\xBF") break;  // a BOM may open the text
      if (k.bytes == "\t" && indent_tabs_only && !indent) break;
      return InvisibleChar{number, column, k.what};
    }
    if (line[i] != ' ' && line[i] != '\t') indent = false;
    // Step one UTF-8 character: its lead byte says how many bytes it has.
    const auto lead = static_cast<unsigned char>(line[i]);
    i += lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    ++column;
  }
  return std::nullopt;
}

}  // namespace

std::optional<InvisibleChar> invisible_near(std::string_view text, int line) {
  const auto lines = lines_of(text);
  if (lines.empty()) return std::nullopt;
  const int last = static_cast<int>(lines.size()) - 1;
  const int at = line < 0 ? 0 : line > last ? last : line;
  std::vector<int> order{at};
  for (int d = 1; d <= 3; ++d)
    if (at - d >= 0) order.push_back(at - d);
  if (at + 1 <= last) order.push_back(at + 1);
  // An indenting tab or any other invisible character first, then a tab anywhere.
  for (const bool indent_tabs_only : {true, false})
    for (const int i : order)
      if (auto c =
              on_line(lines[size_t(i)].first, lines[size_t(i)].second, i + 1, indent_tabs_only))
        return c;
  return std::nullopt;
}

std::string describe_invisible(const InvisibleChar& c) {
  const bool tab = c.what == "a tab character";
  return fmt::format("line {} column {}: {}; {}", c.line, c.column, c.what,
                     tab ? "YAML indents with spaces" : "retype it as a plain space or delete it");
}

}  // namespace servesim
