// Trace files, read whole and sorted (format: csv, or vllm_jsonl; auto picks by extension).
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

const std::vector<std::string> k_trace_columns{"arrival_s", "prompt_tokens", "output_tokens"};

std::vector<RequestSpec> read_rows(CsvColumns& csv) {
  std::vector<RequestSpec> rows;
  while (csv.next_row()) {
    RequestSpec r;
    r.id = rows.size();
    r.arrival = Time::from_seconds(csv.real(0, 0.0, 9.0e9));
    r.prompt_tokens = static_cast<int32_t>(csv.integer(1, 1, 1'000'000'000));
    r.output_tokens = static_cast<int32_t>(csv.integer(2, 1, 1'000'000'000));
    rows.push_back(r);
  }
  if (rows.empty())
    throw InputError(fmt::format("{}: the trace has a header but no requests",
                                 printable(csv.path(), 1024)));
  std::stable_sort(rows.begin(), rows.end(),
                   [](const RequestSpec& a, const RequestSpec& b) { return a.arrival < b.arrival; });
  return rows;
}

}  // namespace

std::vector<RequestSpec> read_csv_trace(const std::string& path) {
  CsvColumns csv(path, k_trace_columns);
  return read_rows(csv);
}

std::vector<RequestSpec> read_csv_trace(std::istream& in, const std::string& name) {
  CsvColumns csv(in, name, k_trace_columns);
  return read_rows(csv);
}

std::unique_ptr<WorkloadSource> make_csv_trace(const Cfg& c,
                                               uint64_t /*seed*/) {
  const std::string resolved = c.existing_file("path", "trace file");
  const std::filesystem::path p(resolved);
  std::string format = c.get_choice("format", "auto", {"auto", "csv", "vllm_jsonl"});
  if (format == "auto") format = p.extension() == ".jsonl" ? "vllm_jsonl" : "csv";
  return std::make_unique<CsvTrace>(format == "csv" ? read_csv_trace(resolved)
                                                    : read_vllm_jsonl(resolved));
}

}  // namespace servesim
