// Mooncake's traces (kvcache-ai/Mooncake, FAST'25 release): one JSON object a line,
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
// timestamp in integer milliseconds; hash_ids names each 512-token block of the prompt
// (TraceOptions::hash_block_tokens), so requests whose ids agree share that prefix. A request
// may list fewer ids than its prompt has blocks (its tail is then unnamed, shared with no one)
// but never more. Arrivals are relative to the first row.
#include <fmt/format.h>

#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

constexpr uint64_t k_max_timestamp_ms = k_max_arrival_ns / 1'000'000;

class MooncakeRows final : public TraceRowReader {
 public:
  MooncakeRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_lines(in, name), m_options(options) {}

  bool next(TraceRow& row) override {
    nlohmann::json obj;
    if (!m_lines.next(obj)) return false;
    row.line = m_lines.line();
    const nlohmann::json& t = m_lines.field(obj, "timestamp");
    // JSON integers >= 0 parse as unsigned; a negative one or a fraction does not.
    if (!t.is_number_unsigned() || t.get<uint64_t>() > k_max_timestamp_ms)
      m_lines.bad("timestamp", t,
                  fmt::format("must be an integer number of milliseconds from 0 to {}",
                              k_max_timestamp_ms));
    row.arrival_ns = t.get<int64_t>() * 1'000'000;
    row.arrival_text = printable(t.dump());
    row.prompt_tokens = m_lines.tokens(obj, "input_length", m_options);
    row.output_tokens = m_lines.tokens(obj, "output_length", m_options);
    row.skip = row.prompt_tokens == 0 || row.output_tokens == 0 ? k_skipped_zero_tokens : nullptr;
    read_hashes(obj, row);
    return true;
  }
  std::string arrival_label() const override { return "field \"timestamp\""; }

 private:
  void read_hashes(const nlohmann::json& obj, TraceRow& row) const {
    row.block_hashes.clear();
    row.hash_block_tokens = m_options.hash_block_tokens;
    auto it = obj.find("hash_ids");
    if (it == obj.end()) return;
    if (!it->is_array())
      m_lines.bad("hash_ids", *it, "must be a list of integers >= 0 (prompt block ids)");
    const int64_t block = m_options.hash_block_tokens;
    const int64_t blocks = (row.prompt_tokens + block - 1) / block;
    if (row.skip == nullptr && static_cast<int64_t>(it->size()) > blocks)
      throw InputError(fmt::format(
          "{}:{}: field \"hash_ids\" has {} ids, more than the {} blocks of {} tokens in "
          "input_length {}: there must be at most one id per block "
          "(workload.trace.hash_block_tokens sets the block size)",
          m_lines.name(), m_lines.line(), it->size(), blocks, block, row.prompt_tokens));
    row.block_hashes.reserve(it->size());
    for (const nlohmann::json& id : *it) {
      if (!id.is_number_unsigned())
        m_lines.bad("hash_ids", id, "each id must be an integer >= 0 (a prompt block id)");
      row.block_hashes.push_back(id.get<uint64_t>());
    }
  }

  JsonLines m_lines;
  TraceOptions m_options;
};

}  // namespace

std::unique_ptr<TraceRowReader> make_mooncake_rows(std::istream& in, const std::string& name,
                                                   const TraceOptions& options) {
  return std::make_unique<MooncakeRows>(in, name, options);
}

}  // namespace servesim
