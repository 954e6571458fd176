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
    // Range-checked as a number, then taken digit by digit when it is a plain decimal, so
    // nanosecond arrivals are exact however late (a double holds 9 decimals only to 2^23 s).
    row.arrival_ns = seconds_to_ns(m_csv.real(0, 0.0, 9.0e9));
    if (int64_t exact = 0; decimal_seconds_to_ns(m_csv.field(0), exact)) row.arrival_ns = exact;
    // Kept raw (quoted only if a message needs it): escaping every row cost ~10% of a replay.
    row.arrival_text.assign(m_csv.field(0));
    row.arrival_text_raw = true;
    row.prompt_tokens = csv_tokens(m_csv, 1, k_columns[1], m_options);
    row.output_tokens = csv_tokens(m_csv, 2, k_columns[2], m_options);
    row.skip = row.prompt_tokens == 0 || row.output_tokens == 0 ? k_skipped_zero_tokens : nullptr;
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
