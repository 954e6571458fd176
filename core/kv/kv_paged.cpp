// Paged (vLLM): memory is split into blocks of block_size tokens, allocated as a request's KV
// grows (its prompt chunk at admission, then one token a decode step). When a running request
// needs a block and none is free, the scheduler preempts by recompute.
#include <fmt/format.h>

#include "core/kv/factories.h"

namespace servesim {
namespace {

class PagedKv final : public KvManager {
 public:
  PagedKv(int64_t capacity_tokens, int64_t block_size)
      : m_block(block_size), m_total_blocks(capacity_tokens / block_size) {}

  int64_t capacity_tokens() const override { return m_total_blocks * m_block; }
  int64_t used_tokens() const override { return m_used_blocks * m_block; }

  int64_t footprint_tokens(const Request& r) const override {
    return blocks_for(r.peak_kv_tokens()) * m_block;
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
  int64_t m_used_blocks = 0;
};

}  // namespace

std::unique_ptr<KvManager> make_paged_kv(const Cfg& kv, int64_t capacity_tokens) {
  const int64_t block = read_block_size(kv, capacity_tokens);
  if (kv.get_bool("prefix_caching", false)) {
    // The prefix cache keeps a table entry per block (about 50 bytes with its key slot).
    constexpr int64_t k_max_blocks = int64_t{1} << 24;
    if (capacity_tokens / block > k_max_blocks)
      kv.fail("prefix_caching",
              fmt::format("a KV capacity of {} tokens is {} blocks of {}; prefix "
                          "caching handles at most {} blocks (raise block_size)",
                          capacity_tokens, capacity_tokens / block, block, k_max_blocks));
    return make_prefix_cached_kv(capacity_tokens, block);
  }
  return std::make_unique<PagedKv>(capacity_tokens, block);
}

}  // namespace servesim
