// Paged (vLLM): memory is split into blocks of block_size tokens, allocated as a request's KV
// grows (its prompt chunk at admission, then one token a decode step). When a running request
// needs a block and none is free, the scheduler preempts by recompute.
//
// With kv.max_output_tokens (or a request's own max_output_tokens from its trace), a request's
// footprint (what GUARANTEED_NO_EVICT admission and static batching must be sure of) is its prompt
// plus that maximum, as TensorRT-LLM counts a request's blocks to completion from its max_tokens:
// the blocks are still taken as the KV grows, but admission keeps room for the whole maximum. A
// request asking for more is refused.
#include <fmt/format.h>

#include "core/kv/factories.h"

namespace servesim {
namespace {

class PagedKv final : public KvManager {
 public:
  PagedKv(int64_t capacity_tokens, int64_t block_size, std::optional<int64_t> max_output)
      : m_block(block_size),
        m_total_blocks(capacity_tokens / block_size),
        m_max_output(max_output) {}

  int64_t capacity_tokens() const override { return m_total_blocks * m_block; }
  int64_t block_tokens() const override { return m_block; }
  int64_t used_tokens() const override { return m_used_blocks * m_block; }

  int64_t footprint_tokens(const Request& r) const override {
    // A request's own maximum (the trace's max_output_tokens column) before the default.
    if (r.spec.max_output_tokens > 0)
      return blocks_for(int64_t{r.spec.prompt_tokens} + r.spec.max_output_tokens) * m_block;
    if (m_max_output) return blocks_for(int64_t{r.spec.prompt_tokens} + *m_max_output) * m_block;
    return blocks_for(r.peak_kv_tokens()) * m_block;
  }

  std::string never_fits(const Request& r) const override {
    if (m_max_output && r.spec.max_output_tokens == 0 && r.spec.output_tokens > *m_max_output)
      return fmt::format("its {} output tokens exceed kv.max_output_tokens = {}",
                         r.spec.output_tokens, *m_max_output);
    return KvManager::never_fits(r);
  }

  bool try_admit(Request& r, int64_t /*cached_tokens*/, int64_t tokens) override {
    return try_grow(r, tokens);
  }

  bool can_admit(const Request& /*r*/, int64_t /*cached_tokens*/, int64_t tokens) const override {
    return m_used_blocks + blocks_for(tokens) <= m_total_blocks;
  }

  bool try_grow(Request& r, int64_t tokens) override {
    if (tokens <= r.kv_held_tokens) return true;  // the common case: room in its last block
    const int64_t need = blocks_for(tokens) - r.kv_held_tokens / m_block;
    if (need <= 0) return true;
    if (m_used_blocks + need > m_total_blocks) return false;
    m_used_blocks += need;
    r.kv_held_tokens += need * m_block;
    return true;
  }

  // try_grow keeps nothing but the count of used blocks and each request's holding.
  bool lazy_growth() const override { return true; }

  bool take_blocks(int64_t blocks) override {
    if (m_used_blocks + blocks > m_total_blocks) return false;
    m_used_blocks += blocks;
    return true;
  }

  void release(Request& r) override {
    m_used_blocks -= r.kv_held_tokens / m_block;
    r.kv_held_tokens = 0;
  }

  bool may_need_preemption() const override { return true; }

 private:
  [[nodiscard]] int64_t blocks_for(int64_t tokens) const {
    return (tokens + m_block - 1) / m_block;
  }

  int64_t m_block;
  int64_t m_total_blocks;
  std::optional<int64_t> m_max_output;
  int64_t m_used_blocks = 0;
};

}  // namespace

std::unique_ptr<KvManager> make_paged_kv(const Cfg& kv, int64_t capacity_tokens) {
  const int64_t block = read_block_size(kv, capacity_tokens);
  const std::optional<int64_t> max_output =
      kv.optional_int("max_output_tokens", {1, int64_t{1} << 40});
  if (kv.get_bool("prefix_caching", false)) {
    if (max_output)
      kv.fail("max_output_tokens", "is not supported with prefix_caching (give one or the other)");
    // The prefix cache keeps a table entry per block (about 50 bytes with its key slot).
    constexpr int64_t k_max_blocks = int64_t{1} << 24;
    if (capacity_tokens / block > k_max_blocks)
      kv.fail("prefix_caching",
              fmt::format("a KV capacity of {} tokens is {} blocks of {}; prefix "
                          "caching handles at most {} blocks (raise block_size)",
                          capacity_tokens, capacity_tokens / block, block, k_max_blocks));
    return make_prefix_cached_kv(capacity_tokens, block,
                                 kv.has("offload") ? read_offload(kv, block) : nullptr);
  }
  return std::make_unique<PagedKv>(capacity_tokens, block, max_output);
}

}  // namespace servesim
