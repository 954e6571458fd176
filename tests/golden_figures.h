// The figures of a run's written files, as scripts/golden.py records them (tests/data/golden/):
// a summary.json flattened to dotted paths, each CSV file's per-column figures, and the
// comparison of two sets of figures. Shared by the golden cases of tests/cli (cli_test.cpp:
// the shipped configs and sweeps; variants_test.cpp: the configs with boundary-valued keys).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace servesim::test::golden {

namespace fs = std::filesystem;

// Under AddressSanitizer and UBSan every run costs several times its Release time, so there
// the case below cuts each config at 60 simulated seconds (every feature's code still runs, with
// --check) and leaves the figures to the Release build, which runs each config in full.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

using Json = nlohmann::json;

inline void flatten(const Json& x, const std::string& prefix, std::map<std::string, Json>& out);

inline void leaf(const Json& v, const std::string& path, std::map<std::string, Json>& out) {
  if (v.is_object()) {
    flatten(v, path, out);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) leaf(v[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    out[path] = v;
  }
}

/// A summary's figures as scripts/golden.py records them: the leaves of nested maps by dotted
/// path and of lists by index, without the `config` echo, `servesim_version` or any
/// `definition` text.
inline void flatten(const Json& x, const std::string& prefix, std::map<std::string, Json>& out) {
  for (const auto& [k, v] : x.items()) {
    if (prefix.empty() && (k == "config" || k == "servesim_version")) continue;
    if (k == "definition") continue;
    leaf(v, prefix.empty() ? k : prefix + "." + k, out);
  }
}

/// `s` is a number as scripts/golden.py's NUMBER reads one: -?(D+.?D*|.D+)([eE][-+]?D+)?
inline bool is_number(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  const bool whole = digits();
  const bool point = i < s.size() && s[i] == '.';
  if (point) ++i;
  const bool fraction = digits();
  if (!whole && !(point && fraction)) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

/// One column's running figures (see csv_figures).
struct Column {
  int64_t blank = 0;
  bool numeric = true;
  double sum = 0, wsum = 0;
  int64_t length_sum = 0, length_wsum = 0;
  bool many_values = false;  ///< more than kTextValues distinct values: only lengths are kept
  std::map<std::string, std::pair<int64_t, int64_t>, std::less<>> values;  ///< count, wsum
};

inline constexpr size_t kTextValues = 16;  // scripts/golden.py's TEXT_VALUES

inline void add_cell(Column& c, std::string_view cell, int64_t row) {
  if (cell.empty()) {
    ++c.blank;
    return;
  }
  const auto n = static_cast<int64_t>(cell.size());
  c.length_sum += n;
  c.length_wsum += (row + 1) * n;
  if (c.numeric && is_number(cell)) {
    double v = 0;
    std::from_chars(cell.data(), cell.data() + cell.size(), v);
    c.sum += v;
    c.wsum += static_cast<double>(row + 1) * v;
  } else {
    c.numeric = false;
  }
  if (c.many_values) return;
  auto it = c.values.find(cell);
  if (it == c.values.end())
    it = c.values.emplace(std::string(cell), std::pair<int64_t, int64_t>{0, 0}).first;
  it->second.first += 1;
  it->second.second += row + 1;
  if (c.values.size() > kTextValues) {
    c.many_values = true;
    c.values.clear();
  }
}

/// The figures scripts/golden.py's csv_figures keeps of one CSV file servesim wrote: `(FILE)
/// rows`; per numeric column the sum and the position-weighted sum (row+1)*value; per text
/// column each value's count and position-weighted count, or (more than kTextValues values) the
/// cells' byte lengths summed both ways; and per column its blank cells, where there are any.
inline void csv_figures(const fs::path& file, std::map<std::string, Json>& out) {
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string name = "(" + file.filename().string() + ") ";
  std::vector<std::string> header;
  std::vector<Column> columns;
  int64_t row = -1;  // the header
  std::string quoted;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    size_t col = 0, i = 0;
    while (true) {  // one cell per turn, from line[i]
      std::string_view cell;
      if (i < line.size() && line[i] == '"') {
        quoted.clear();
        for (++i; i < line.size(); ++i) {
          if (line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') {
            quoted += '"';
            ++i;
          } else if (line[i] == '"') {
            ++i;
            break;
          } else {
            quoted += line[i];
          }
        }
        const size_t comma = std::min(line.find(',', i), line.size());
        quoted.append(line.substr(i, comma - i));
        cell = quoted;
        i = comma;
      } else {
        const size_t comma = std::min(line.find(',', i), line.size());
        cell = line.substr(i, comma - i);
        i = comma;
      }
      if (row < 0) {
        header.emplace_back(cell);
      } else if (col < columns.size()) {
        add_cell(columns[col], cell, row);
      }
      ++col;
      if (i >= line.size()) break;
      ++i;  // the comma
    }
    if (row < 0) {
      columns.resize(header.size());
    } else {
      for (; col < columns.size(); ++col) add_cell(columns[col], "", row);
    }
    ++row;
  }
  out[name + "rows"] = row;
  for (size_t j = 0; j < header.size(); ++j) {
    Column& c = columns[j];
    const std::string key = name + header[j];
    if (c.blank) out[key + " blank"] = c.blank;
    if (c.blank == row) continue;
    if (c.numeric) {
      out[key + " sum"] = c.sum;
      out[key + " wsum"] = c.wsum;
    } else if (!c.many_values) {
      for (const auto& [v, n] : c.values) {
        out[key + "=" + v + " count"] = n.first;
        out[key + "=" + v + " wsum"] = n.second;
      }
    } else {
      out[key + " length sum"] = c.length_sum;
      out[key + " length wsum"] = c.length_wsum;
    }
  }
}

/// The golden figures differ from this run's: a message per figure, empty when they agree.
inline std::string golden_differences(const Json& golden, const std::map<std::string, Json>& now) {
  std::string diff;
  std::map<std::string, Json> want;
  for (const auto& [k, v] : golden.items()) want[k] = v;
  for (const auto& [k, v] : want) {
    const auto it = now.find(k);
    if (it == now.end()) {
      diff += k + ": " + v.dump() + " -> (absent)\n";
      continue;
    }
    const Json& w = it->second;
    bool same = v == w;
    if (!same && v.is_number() && w.is_number() && !v.is_boolean() && !w.is_boolean()) {
      const double a = v.get<double>(), b = w.get<double>();
      same = std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
    }
    if (!same) diff += k + ": " + v.dump() + " -> " + w.dump() + "\n";
  }
  for (const auto& [k, v] : now)
    if (!want.count(k)) diff += k + ": (absent) -> " + v.dump() + "\n";
  return diff;
}

}  // namespace servesim::test::golden
