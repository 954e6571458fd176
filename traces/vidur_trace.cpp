// Vidur's request traces (microsoft/vidur): the requests its request generators write and its
// entities carry (Request.to_dict: arrived_at, num_prefill_tokens, num_decode_tokens):
//   id,arrived_at,num_prefill_tokens,num_decode_tokens
//   0,0.0,1024,128
// arrived_at is in seconds from the trace's start, num_prefill_tokens the prompt and
// num_decode_tokens the output (Vidur counts the first output token among them, as servesim
// does). Other columns (id) are ignored. Arrivals are taken relative to the first row.
#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

const std::vector<std::string> k_columns{"arrived_at", "num_prefill_tokens", "num_decode_tokens"};

class VidurRows final : public TraceRowReader {
 public:
  VidurRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_csv(in, name, k_columns), m_options(options) {}

  bool next(TraceRow& row) override {
    if (!m_csv.next_row()) return false;
    row.line = m_csv.line();
    row.arrival_ns = csv_seconds_ns(m_csv, 0);
    fill_csv_row(row, m_csv, 0, 1, 2, k_columns, m_options);
    return true;
  }
  std::string arrival_label() const override { return "column arrived_at"; }
  const char* empty_trace() const override { return "the trace has a header but no requests"; }

 private:
  CsvColumns m_csv;
  TraceOptions m_options;
};

}  // namespace

std::unique_ptr<TraceRowReader> make_vidur_rows(std::istream& in, const std::string& name,
                                                const TraceOptions& options) {
  return std::make_unique<VidurRows>(in, name, options);
}

}  // namespace servesim
