// BurstGPT traces (HPMLL/BurstGPT): a CSV with the header
//   Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
// (later releases add Session ID and Elapsed time; extra columns are ignored). Timestamp is in
// seconds from the start of the log (a number, fractions allowed); Request tokens is the
// prompt, Response tokens the output. A failed request is logged with 0 response tokens: such
// a row stops the run unless workload.trace.zero_tokens: skip drops and counts it. With
// TraceOptions::model set, rows of other models are dropped and counted (only their Timestamp
// is checked). Arrivals are relative to the first row kept.
#include <fmt/format.h>

#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

const std::vector<std::string> k_columns{"Timestamp", "Model", "Request tokens", "Response tokens"};

class BurstGptRows final : public TraceRowReader {
 public:
  BurstGptRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_csv(in, name, k_columns), m_options(options) {}

  bool next(TraceRow& row) override {
    if (!m_csv.next_row()) return false;
    row.line = m_csv.line();
    row.arrival_ns = csv_seconds_ns(m_csv, 0);
    if (!m_options.model.empty() && m_csv.field(1) != m_options.model) {
      row.arrival_text.assign(m_csv.field(0));
      row.arrival_text_raw = true;
      row.skip = k_skipped_other_model;
      return true;
    }
    fill_csv_row(row, m_csv, 0, 2, 3, k_columns, m_options);
    return true;
  }
  std::string arrival_label() const override { return "column Timestamp"; }
  const char* empty_trace() const override { return "the trace has a header but no requests"; }

 private:
  CsvColumns m_csv;
  TraceOptions m_options;
};

}  // namespace

std::unique_ptr<TraceRowReader> make_burstgpt_rows(std::istream& in, const std::string& name,
                                                   const TraceOptions& options) {
  return std::make_unique<BurstGptRows>(in, name, options);
}

}  // namespace servesim
