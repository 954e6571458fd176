// vLLM benchmark / LLMServingSim request logs (`requests.jsonl`): one JSON object a line with
// `input_toks`, `output_toks` and `arrival_time` (seconds, any origin: often the Unix epoch);
// an optional integer `priority` (vLLM's: lower is served first; default 0); other fields are
// ignored. Arrivals are taken relative to the first request.
#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

class VllmJsonlRows final : public TraceRowReader {
 public:
  VllmJsonlRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_lines(in, name), m_options(options) {}

  bool next(TraceRow& row) override {
    nlohmann::json obj;
    if (!m_lines.next(obj)) return false;
    row.line = m_lines.line();
    row.prompt_tokens = m_lines.tokens(obj, "input_toks", m_options);
    row.output_tokens = m_lines.tokens(obj, "output_toks", m_options);
    const nlohmann::json& t = m_lines.field(obj, "arrival_time");
    // Epoch seconds fit: 9e9 s is the year 2255.
    if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0 ||
        t.get<double>() > 9.0e9)
      m_lines.bad("arrival_time", t, "must be a finite number of seconds from 0 to 9000000000");
    row.arrival_ns = seconds_to_ns(t.get<double>());
    row.arrival_text = printable(t.dump());
    row.skip = row.prompt_tokens == 0 || row.output_tokens == 0 ? k_skipped_zero_tokens : nullptr;
    row.priority = 0;
    if (const auto p = obj.find("priority"); p != obj.end()) {
      // JSON integers >= 0 parse as unsigned: compared as such, a huge one cannot wrap.
      const bool ok = p->is_number_unsigned()
                          ? p->get<uint64_t>() <= static_cast<uint64_t>(k_max_priority)
                          : p->is_number_integer() && p->get<int64_t>() >= k_min_priority;
      if (!ok)
        m_lines.bad(
            "priority", *p,
            fmt::format("must be an integer from {} to {}", k_min_priority, k_max_priority));
      row.priority = static_cast<int32_t>(p->get<int64_t>());
    }
    return true;
  }
  std::string arrival_label() const override { return "field \"arrival_time\""; }

 private:
  JsonLines m_lines;
  TraceOptions m_options;
};

}  // namespace

std::unique_ptr<TraceRowReader> make_vllm_jsonl_rows(std::istream& in, const std::string& name,
                                                     const TraceOptions& options) {
  return std::make_unique<VllmJsonlRows>(in, name, options);
}

std::vector<RequestSpec> read_vllm_jsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open trace file", printable(path, 1024)));
  return read_vllm_jsonl(in, path);
}

std::vector<RequestSpec> read_vllm_jsonl(std::istream& in, const std::string& name) {
  TraceOptions options;
  options.format = "vllm_jsonl";
  return read_trace(in, name, options);
}

}  // namespace servesim
