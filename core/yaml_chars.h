#pragma once
// The characters a YAML parser stumbles on that a reader cannot see: a tab, a non-breaking
// space, a zero-width space. yaml-cpp reports only what it expected ("end of map not found");
// invisible_near() finds the character itself, so that the message can name it.
#include <optional>
#include <string>
#include <string_view>

namespace servesim {

/// One invisible or misleading character in a text: where it is (1-based line and column, the
/// column counted in characters) and what it is ("a tab character").
struct InvisibleChar {
  int line = 0;
  int column = 0;
  std::string what;
};

/// The first invisible character on line `line` (0-based, as yaml-cpp's marks count) of `text`,
/// else on the lines before it (a tab that opened a map is often reported a line or two on),
/// else on the line after it; std::nullopt when there is none. A tab in an indent is looked for
/// before one between a key and its value (which YAML allows). A byte-order mark at the very
/// start of the text is not one (YAML allows it).
[[nodiscard]] std::optional<InvisibleChar> invisible_near(std::string_view text, int line);

/// "line 4 column 1: a tab character; YAML indents with spaces", or for the other characters
/// "line 4 column 7: a non-breaking space (U+00A0); type a plain space".
[[nodiscard]] std::string describe_invisible(const InvisibleChar& c);

}  // namespace servesim
