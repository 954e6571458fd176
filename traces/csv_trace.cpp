// servesim's CSV trace: a header naming at least arrival_s, prompt_tokens and output_tokens (in
// any order; other columns are ignored), then one request a row. Rows need not be sorted: the
// reader sorts by arrival, keeping file order among equal arrivals.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "traces/workload_source.h"

namespace servesim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

void split(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  for (;;) {
    size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

class CsvTrace final : public WorkloadSource {
 public:
  explicit CsvTrace(std::vector<RequestSpec> rows) : m_rows(std::move(rows)) {}
  bool next(RequestSpec& out) override {
    if (m_pos == m_rows.size()) return false;
    out = m_rows[m_pos++];
    return true;
  }
  size_t size_hint() const override { return m_rows.size(); }

 private:
  std::vector<RequestSpec> m_rows;
  size_t m_pos = 0;
};

}  // namespace

std::vector<RequestSpec> read_csv_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open trace file", path));

  std::string line;
  std::vector<std::string_view> fields;
  size_t line_no = 0;
  // Header: the first non-empty line.
  while (std::getline(in, line)) {
    ++line_no;
    if (!trim(line).empty()) break;
  }
  if (trim(line).empty())
    throw InputError(fmt::format("{}: empty trace (expected a header with arrival_s, "
                                 "prompt_tokens, output_tokens)", path));
  split(line, fields);
  const char* names[3] = {"arrival_s", "prompt_tokens", "output_tokens"};
  size_t col[3];
  for (int k = 0; k < 3; ++k) {
    auto it = std::find(fields.begin(), fields.end(), names[k]);
    if (it == fields.end())
      throw InputError(fmt::format("{}:{}: header lacks column {} (needs arrival_s, "
                                   "prompt_tokens, output_tokens; found: {})",
                                   path, line_no, names[k], trim(line)));
    col[k] = static_cast<size_t>(it - fields.begin());
  }
  const size_t n_cols = fields.size();

  std::vector<RequestSpec> rows;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    split(line, fields);
    if (fields.size() != n_cols)
      throw InputError(fmt::format("{}:{}: {} fields, but the header has {} columns", path,
                                   line_no, fields.size(), n_cols));
    RequestSpec r;
    r.id = rows.size();
    {
      const std::string s(fields[col[0]]);
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0 || v > 9.0e9)
        throw InputError(fmt::format("{}:{}: column arrival_s = \"{}\": must be a number of "
                                     "seconds, >= 0 and finite", path, line_no, s));
      r.arrival = Time::from_seconds(v);
    }
    for (int k = 1; k < 3; ++k) {
      const std::string_view s = fields[col[k]];
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || ptr != s.data() + s.size() || v < 1 || v > 1'000'000'000)
        throw InputError(fmt::format("{}:{}: column {} = \"{}\": must be an integer from 1 to "
                                     "1000000000", path, line_no, names[k], s));
      (k == 1 ? r.prompt_tokens : r.output_tokens) = static_cast<int32_t>(v);
    }
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(fmt::format("{}: the trace has a header but no requests", path));
  std::stable_sort(rows.begin(), rows.end(),
                   [](const RequestSpec& a, const RequestSpec& b) { return a.arrival < b.arrival; });
  return rows;
}

std::unique_ptr<WorkloadSource> make_csv_trace(const Cfg& c, const std::string& base_dir,
                                               uint64_t /*seed*/) {
  std::string path = c.get_string("path");
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec))
    c.fail("path", fmt::format("no such trace file ({}; relative paths are resolved against the "
                               "config file's folder)", p.lexically_normal().string()));
  return std::make_unique<CsvTrace>(read_csv_trace(p.lexically_normal().string()));
}

}  // namespace servesim
