// docs/config.md against the code: every number a shipped scenario's parts read (the key, the
// range its reader enforces, its default) must be written the same way in a table row of the
// docs. A range or default changed in the code and not in the docs, or the other way round,
// fails here, naming the key and both texts.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/config.h"
#include "sim/scenario.h"
#include "tests/support.h"

using namespace servesim;
namespace fs = std::filesystem;

namespace {

/// One table row of the docs that documents a key: its name and the two cells after it.
struct DocRow {
  std::string file;
  int line = 0;
  std::string key, type, fallback;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' ');
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(' ') - a + 1);
}

/// The cells of a Markdown table row (`\|` inside a cell is not a separator).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cur += '|';
      ++i;
    } else if (line[i] == '|') {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return out;
}

/// Every row whose first or second cell is one backquoted key name, with the two cells after it.
std::vector<DocRow> doc_rows() {
  std::vector<DocRow> rows;
  static const std::regex key_cell(R"(`([a-z][a-z0-9_]*)`)");
  for (const auto& e : fs::directory_iterator(fs::path(SERVESIM_SOURCE_DIR) / "docs")) {
    if (e.path().extension() != ".md") continue;
    std::ifstream in(e.path());
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.rfind("|", 0) != 0) continue;
      const std::vector<std::string> c = cells_of(line);
      for (size_t k = 0; k < 2 && k + 2 < c.size(); ++k) {
        std::smatch m;
        if (std::regex_match(c[k], m, key_cell)) {
          rows.push_back({e.path().filename().string(), n, m[1], c[k + 1], c[k + 2]});
          break;
        }
      }
    }
  }
  return rows;
}

/// A number in one spelling: integral values as integers (1e9 -> 1000000000).
std::string canon_num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e18) return std::to_string(static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

/// A number as the docs write it: 1024, 1,048,576, 2^20, 10^9, 9e9, 0.5; nullopt otherwise.
std::optional<double> doc_number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  static const std::regex power(R"((\d+)\^(\d+))");
  std::smatch m;
  if (std::regex_match(s, m, power)) return std::pow(std::stod(m[1]), std::stod(m[2]));
  static const std::regex plain(R"(-?\d+(\.\d+)?(e\d+)?)");
  if (std::regex_match(s, plain)) return std::stod(s);
  return std::nullopt;
}

/// What a doc's type cell allows, in KeyUse::allowed's words ("integer from 1 to 1024"), or
/// "" when the cell states no range servesim's readers could enforce (a bound that names
/// another key, a list, a map).
std::string doc_allowed(const std::string& cell) {
  const std::string num = R"(([0-9][0-9,.^e]*))";
  const std::vector<std::pair<std::regex, std::string>> forms{
      {std::regex("^(integer|number)s? from " + num + " to " + num + R"(\b.*)"), "$1 from $2 to $3"},
      {std::regex("^number in \\(" + num + ", " + num + R"(\].*)"), "number > $1 and <= $2"},
      {std::regex("^number in \\[" + num + ", " + num + R"(\].*)"), "number from $1 to $2"},
      {std::regex("^number > " + num + ", at most " + num + R"(\b.*)"), "number > $1 and <= $2"},
      {std::regex("^number > " + num + " and <= " + num + R"(\b.*)"), "number > $1 and <= $2"},
      {std::regex("^(integer|number)s? (>=|>|<=) " + num + R"(\b.*)"), "$1 $2 $3"},
      {std::regex("^(integer|number)s?(, required)?$"), "$1"},
  };
  for (const auto& [re, fmt_] : forms) {
    std::smatch m;
    if (!std::regex_match(cell, m, re)) continue;
    std::string out = m.format(fmt_);
    // Numbers in the code's words: 2^20 -> 1048576, 1,024 -> 1024, 0.5 stays.
    static const std::regex doc_num(R"([0-9][0-9,.^e]*[0-9]|[0-9])");
    std::string canon;
    auto it = std::sregex_iterator(out.begin(), out.end(), doc_num);
    size_t last = 0;
    for (; it != std::sregex_iterator(); ++it) {
      canon += out.substr(last, it->position() - last);
      const std::optional<double> v = doc_number(it->str());
      canon += v ? canon_num(*v) : it->str();
      last = it->position() + it->length();
    }
    return canon + out.substr(last);
  }
  return "";
}

/// A code range with its numbers in the same words as doc_allowed's.
std::string code_allowed(const std::string& allowed) {
  static const std::regex num(R"(-?[0-9][0-9.e+]*)");
  std::string canon;
  size_t last = 0;
  for (auto it = std::sregex_iterator(allowed.begin(), allowed.end(), num);
       it != std::sregex_iterator(); ++it) {
    canon += allowed.substr(last, it->position() - last);
    canon += canon_num(std::stod(it->str()));
    last = it->position() + it->length();
  }
  return canon + allowed.substr(last);
}

std::string last_part(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

/// Every number the parts of every shipped scenario read, one entry per distinct use.
std::vector<KeyUse> uses_of_shipped_scenarios() {
  const fs::path configs = fs::path(SERVESIM_SOURCE_DIR) / "configs";
  const std::set<fs::path> not_scenarios{"models", "hardware", "shape-roofline", "step_times",
                                         "sweeps"};
  KeyLog log;
  for (auto it = fs::recursive_directory_iterator(configs);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && not_scenarios.count(it->path().lexically_relative(configs))) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() != ".yaml") continue;
    if (!fs::exists(SERVESIM_SHARED_DATA)) {
      std::ifstream in(it->path());
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find("shared/data") != std::string::npos) continue;
    }
    (void)build_scenario(Document::load_file(it->path().string()));
  }
  std::vector<KeyUse> out;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const KeyUse& u : log.uses())
    // A shape-roofline fit is written by scripts/fit_shape_roofline.py, not by hand; its
    // keys are documented with that script.
    if (u.file.find("shape-roofline") == std::string::npos &&
        seen.insert({last_part(u.path), u.allowed, u.fallback}).second) out.push_back(u);
  return out;
}

}  // namespace

TEST_CASE("config docs: every range a scenario's reader enforces is the one the docs give",
          "[config][docs]") {
  const std::vector<DocRow> rows = doc_rows();
  const std::vector<KeyUse> uses = uses_of_shipped_scenarios();
  CHECK(uses.size() > 100);
  std::string missing;
  int checked = 0;
  for (const KeyUse& u : uses) {
    const std::string key = last_part(u.path);
    const std::string want = code_allowed(u.allowed);
    std::string seen;
    bool found = false;
    for (const DocRow& r : rows) {
      if (r.key != key) continue;
      const std::string doc = doc_allowed(r.type);
      found = found || doc == want;
      seen += fmt::format("\n    {}:{}: \"{}\"", r.file, r.line, r.type);
    }
    ++checked;
    if (!found)
      missing += fmt::format("\n  {} ({}): the code allows \"{}\"; the docs say:{}", u.path,
                             u.file, u.allowed, seen.empty() ? " nothing" : seen);
  }
  INFO(checked << " keys checked");
  CHECK(missing == "");
}

TEST_CASE("config docs: the doc's type cells read as the code's ranges", "[config][docs]") {
  CHECK(doc_allowed("integer from 1 to 1024") == "integer from 1 to 1024");
  CHECK(doc_allowed("integer from 1 to 2^20, required") == "integer from 1 to 1048576");
  CHECK(doc_allowed("integers from 1 to 1,048,576") == "integer from 1 to 1048576");
  CHECK(doc_allowed("integer >= 1") == "integer >= 1");
  CHECK(doc_allowed("number > 0, at most 10^9") == "number > 0 and <= 1000000000");
  CHECK(doc_allowed("number in (0, 1]") == "number > 0 and <= 1");
  CHECK(doc_allowed("number from 0 to 1, or `profile`") == "number from 0 to 1");
  CHECK(doc_allowed("integer from 1 to `experts`") == "");
  CHECK(code_allowed(describe(IntRange{1, 1 << 20})) == "integer from 1 to 1048576");
  CHECK(code_allowed(describe(RealRange{0.0, 1e9, true})) == "number > 0 and <= 1000000000");
  CHECK(code_allowed(describe(k_non_negative)) == "number >= 0");
}
