// servesim's own CSV trace: a header naming at least arrival_s (seconds from time 0, taken as
// they are), prompt_tokens and output_tokens, in any order; other columns are ignored. One
// request a row.
#include <fmt/format.h>

#include <fstream>

#include "sim/errors.h"
#include "traces/trace_rows.h"

namespace servesim {
namespace {

const std::vector<std::string> k_columns{"arrival_s", "prompt_tokens", "output_tokens"};

class ServesimCsvRows final : public TraceRowReader {
 public:
  ServesimCsvRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_csv(in, name, k_columns), m_options(options) {}

  bool next(TraceRow& row) override {
    if (!m_csv.next_row()) return false;
    row.line = m_csv.line();
    row.arrival_ns = csv_seconds_ns(m_csv, 0);
    fill_csv_row(row, m_csv, 0, 1, 2, k_columns, m_options);
    return true;
  }
  bool absolute_time() const override { return true; }
  std::string arrival_label() const override { return "column arrival_s"; }
  const char* empty_trace() const override { return "the trace has a header but no requests"; }

 private:
  CsvColumns m_csv;
  TraceOptions m_options;
};

}  // namespace

std::unique_ptr<TraceRowReader> make_servesim_csv_rows(std::istream& in, const std::string& name,
                                                       const TraceOptions& options) {
  return std::make_unique<ServesimCsvRows>(in, name, options);
}

std::vector<RequestSpec> read_csv_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", printable(path, 1024)));
  return read_csv_trace(in, path);
}

std::vector<RequestSpec> read_csv_trace(std::istream& in, const std::string& name) {
  return read_trace(in, name, TraceOptions{});
}

}  // namespace servesim
