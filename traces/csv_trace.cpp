// servesim's CSV trace: a header naming at least arrival_s, prompt_tokens and output_tokens (in
// any order; other columns are ignored), then one request a row. Rows need not be sorted: the
// reader sorts by arrival, keeping file order among equal arrivals.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "sim/csv_columns.h"
#include "traces/workload_source.h"

namespace servesim {
namespace {

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
  CsvColumns csv(path, {"arrival_s", "prompt_tokens", "output_tokens"});
  std::vector<RequestSpec> rows;
  while (csv.next_row()) {
    RequestSpec r;
    r.id = rows.size();
    r.arrival = Time::from_seconds(csv.real(0, 0.0, 9.0e9));
    r.prompt_tokens = static_cast<int32_t>(csv.integer(1, 1, 1'000'000'000));
    r.output_tokens = static_cast<int32_t>(csv.integer(2, 1, 1'000'000'000));
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
