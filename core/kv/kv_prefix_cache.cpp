// Paged KV with automatic prefix caching, as vLLM's (V1) KV-cache manager does it.
//
// Memory is blocks of block_size tokens. A full block whose tokens are known to be shared
// content gets an identity (a 64-bit key standing for "these tokens, after exactly this prefix")
// and is entered in the cache when it is allocated for tokens being computed. A request being
// admitted first takes the longest run of leading blocks whose keys are cached (at most up to
// its last prefill token, which is always computed), adding a reference to each; the rest it
// allocates. Freed blocks (release, preemption) keep their key and go to the back of an LRU
// free queue, the request's last block first, so a later request can still hit them; a block
// is evicted (its key forgotten) only when the queue's front is taken for new tokens.
//
// Keys. With RequestSpec::content_stream (a conversation) block j of any request of the stream
// is key(stream, j). With block_hashes (Mooncake's hash_ids, one per hash_block_tokens tokens),
// block j's key chains every trace hash up to the one holding its last token, plus its end
// position; only blocks inside the prompt and inside the hashed span have one. Every other
// block is keyed by its request and position: its content is the request's own, shared with
// nobody, but cached like any other (as vLLM hashes every full block), so a request preempted by
// recompute finds the blocks it had computed while they have not been evicted.
//
// Offload (kv.offload, core/kv/kv_tiers.h): an evicted block's key moves down to the tiers; a
// lookup goes on past the GPU's hits into them, and an admission reloads the blocks they hold
// into fresh GPU blocks, which are cached again like computed ones. prefix_stats counts the
// GPU's hits only; the tiers count theirs.
//
// Memory: a fixed block table and an open-addressing key table sized at creation; requests keep
// their block lists in vectors whose capacity is reused with the request slot. The per-step
// path allocates nothing.
#include <algorithm>
#include <cassert>

#include "core/kv/factories.h"
#include "core/kv/key_table.h"

namespace servesim {
namespace {

constexpr uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
constexpr int32_t k_none = -1;
constexpr uint64_t k_own_domain = 0x4f574e424c4f434bULL;  // keeps own keys apart from streams

class PrefixCachedKv final : public KvManager {
 public:
  PrefixCachedKv(int64_t capacity_tokens, int64_t block_size, std::unique_ptr<KvTiers> tiers)
      : m_block(block_size),
        m_total(static_cast<int32_t>(capacity_tokens / block_size)),
        m_table(static_cast<size_t>(m_total)),
        m_tiers(std::move(tiers)) {
    m_blocks.resize(static_cast<size_t>(m_total));
    for (int32_t b = 0; b < m_total; ++b) push_back_free(b);
  }

  int64_t capacity_tokens() const override { return int64_t{m_total} * m_block; }
  int64_t block_tokens() const override { return m_block; }
  int64_t used_tokens() const override { return int64_t{m_total - m_free_count} * m_block; }
  int64_t footprint_tokens(const Request& r) const override {
    return blocks_for(r.peak_kv_tokens()) * m_block;
  }
  bool may_need_preemption() const override { return true; }
  std::optional<PrefixStats> prefix_stats() const override { return m_stats; }
  KvTiers* offload() override { return m_tiers.get(); }
  const KvTiers* offload() const override { return m_tiers.get(); }

  int64_t cached_prefix_tokens(Request& r) override {
    prepare_keys(r);
    const int64_t limit = (r.prefill_target - 1) / m_block;  // blocks before the last token
    int64_t n = 0;
    for (; n < limit; ++n) {
      if (m_table.find(key_of(r, n)) == k_none) break;
    }
    if (m_tiers) n = extend_into_tiers(r, n, limit);
    return n * m_block;
  }

  uint64_t prefix_block_key(const Request& r, int64_t j) const override { return key_of(r, j); }

  bool can_admit(const Request& r, int64_t cached_tokens, int64_t tokens) const override {
    return admission_cost(r, cached_tokens, tokens) <= m_free_count;
  }

  bool try_admit(Request& r, int64_t cached_tokens, int64_t tokens) override {
    assert(r.kv_blocks.empty() && cached_tokens % m_block == 0);
    const int64_t hits = cached_tokens / m_block;
    const int64_t fresh = blocks_for(tokens) - hits;
    if (admission_cost(r, cached_tokens, tokens) > m_free_count) return false;
    // Takes the GPU's hits first (so that allocating the others cannot evict them), holding a
    // place for each block a lower tier reloads.
    int64_t gpu_hits = 0, first_reload = hits;
    for (int64_t j = 0; j < hits; ++j) {
      const int32_t b = block_at(r, j);
      if (b == k_none) {
        first_reload = std::min(first_reload, j);
      } else {
        ++gpu_hits;
        if (m_blocks[b].refs++ == 0) unlink_free(b);
      }
      r.kv_blocks.push_back(b);
    }
    if (m_tiers) note_reloads(r, hits, gpu_hits);
    for (int64_t j = first_reload; j < hits; ++j)
      if (r.kv_blocks[static_cast<size_t>(j)] == k_none)
        r.kv_blocks[static_cast<size_t>(j)] = take_one();
    r.kv_keyed_blocks = static_cast<int32_t>(first_reload);
    take_fresh(r, fresh);
    r.kv_held_tokens = static_cast<int64_t>(r.kv_blocks.size()) * m_block;
    enter_full_blocks(r, tokens);
    m_stats.queried_tokens += r.prefill_target;
    m_stats.hit_tokens += gpu_hits * m_block;
    m_stats.queried_blocks += r.prefill_target / m_block;
    m_stats.hit_blocks += gpu_hits;
    return true;
  }

  bool try_swap_in(Request& r, int64_t tokens) override {
    assert(r.kv_blocks.empty());
    const int64_t need = blocks_for(tokens);
    if (need > m_free_count) return false;
    r.kv_keyed_blocks = 0;
    take_fresh(r, need);
    r.kv_held_tokens = static_cast<int64_t>(r.kv_blocks.size()) * m_block;
    enter_full_blocks(r, tokens);  // the copied-back blocks are cached again
    return true;
  }

  bool try_grow(Request& r, int64_t tokens) override {
    const int64_t need = blocks_for(tokens) - static_cast<int64_t>(r.kv_blocks.size());
    if (need > m_free_count) return false;
    if (need > 0) {
      take_fresh(r, need);
      r.kv_held_tokens = static_cast<int64_t>(r.kv_blocks.size()) * m_block;
    }
    enter_full_blocks(r, tokens);
    return true;
  }

  void release(Request& r) override {
    // Last block first into the queue, so a sequence's tail is evicted before its head.
    for (auto it = r.kv_blocks.rbegin(); it != r.kv_blocks.rend(); ++it)
      if (--m_blocks[*it].refs == 0) push_back_free(*it);
    r.kv_blocks.clear();
    r.kv_keyed_blocks = 0;
    r.kv_held_tokens = 0;
  }

  void drop_cache() override {
    for (Block& blk : m_blocks) {
      assert(blk.refs == 0);
      if (blk.key == 0) continue;
      m_table.erase(blk.key);
      blk.key = 0;
    }
  }

 private:
  struct Block {
    int32_t refs = 0;
    int32_t prev = k_none, next = k_none;  // links in the free queue
    uint64_t key = 0;                      // 0: not in the cache
  };

  [[nodiscard]] int64_t blocks_for(int64_t tokens) const {
    return (tokens + m_block - 1) / m_block;
  }

  /// Free blocks that admitting r would take: its fresh blocks, and its hit blocks that nobody
  /// holds (they sit in the free queue, and admission takes them out of it).
  [[nodiscard]] int64_t admission_cost(const Request& r, int64_t cached_tokens,
                                       int64_t tokens) const {
    const int64_t hits = cached_tokens / m_block;
    int64_t revived = 0, in_gpu = 0;
    for (int64_t j = 0; j < hits; ++j) {
      const int32_t b = block_at(r, j);  // k_none: a lower tier reloads it into a fresh block
      if (b == k_none) continue;
      ++in_gpu;
      revived += m_blocks[b].refs == 0;
    }
    return revived + blocks_for(tokens) - in_gpu;
  }

  /// Chained keys of the prompt's blocks covered by the trace's hashes, worked out once.
  void prepare_keys(Request& r) const {
    const RequestSpec& s = r.spec;
    if (s.content_stream != 0 || s.block_hashes.empty() || s.hash_block_tokens <= 0 ||
        !r.kv_block_keys.empty())
      return;
    const int64_t hashed = std::min<int64_t>(
        s.prompt_tokens, static_cast<int64_t>(s.block_hashes.size()) * s.hash_block_tokens);
    uint64_t chain = 0;
    size_t chained = 0;  // trace hashes folded into `chain`
    for (int64_t end = m_block; end <= hashed; end += m_block) {
      const auto last = static_cast<size_t>((end - 1) / s.hash_block_tokens);
      for (; chained <= last; ++chained) chain = mix(chain ^ mix(s.block_hashes[chained] + 1));
      r.kv_block_keys.push_back(mix(chain + static_cast<uint64_t>(end)) | 1);
    }
  }

  /// The identity of the request's block j: the shared content's where the workload says what
  /// the tokens are, otherwise the request's own, which only it can hit (after a preemption its
  /// recompute reuses the blocks it computed before, while they are still cached). Never 0.
  [[nodiscard]] uint64_t key_of(const Request& r, int64_t j) const {
    if (r.spec.content_stream != 0)
      return mix(mix(r.spec.content_stream) + static_cast<uint64_t>(j)) | 1;
    if (j < static_cast<int64_t>(r.kv_block_keys.size())) return r.kv_block_keys[j];
    return mix(mix(mix(r.spec.id) ^ k_own_domain) + static_cast<uint64_t>(j)) | 1;
  }

  /// Goes on from the GPU's `n` hits through blocks held in GPU memory or a lower tier, up to
  /// `limit`; keeps them only if the tiers judge the reload worth it (reload: if_faster).
  int64_t extend_into_tiers(const Request& r, int64_t n, int64_t limit) {
    int64_t* per_tier = m_tiers->scratch(0);
    std::fill(per_tier, per_tier + m_tiers->size(), 0);
    const int64_t gpu_run = n;
    for (; n < limit; ++n) {
      const uint64_t key = key_of(r, n);
      if (m_table.find(key) != k_none) continue;
      const int t = m_tiers->find(key);
      if (t < 0) break;
      ++per_tier[t];
    }
    return n > gpu_run && !m_tiers->worth_reloading(per_tier) ? gpu_run : n;
  }

  /// Counts an admission's lookups and reloads per tier (blocks of r.kv_blocks still k_none are
  /// reloaded; the tier blocks found right after the prefix taken were declined) and marks the
  /// reloaded blocks used in their tier, before any allocation can move them.
  void note_reloads(const Request& r, int64_t hits, int64_t gpu_hits) {
    int64_t* reloaded = m_tiers->scratch(1);
    int64_t* declined = m_tiers->scratch(2);
    std::fill(reloaded, reloaded + m_tiers->size(), 0);
    std::fill(declined, declined + m_tiers->size(), 0);
    for (int64_t j = 0; j < hits; ++j) {
      if (r.kv_blocks[static_cast<size_t>(j)] != k_none) continue;
      const uint64_t key = key_of(r, j);
      const int t = m_tiers->find(key);
      assert(t >= 0);
      ++reloaded[t];
      m_tiers->touch(t, key);
    }
    for (int64_t j = hits; j < (r.prefill_target - 1) / m_block; ++j) {
      const uint64_t key = key_of(r, j);
      if (m_table.find(key) != k_none) continue;
      const int t = m_tiers->find(key);
      if (t < 0) break;
      ++declined[t];
    }
    m_tiers->record_admission(r.prefill_target, r.prefill_target / m_block, gpu_hits, reloaded,
                              declined);
  }

  /// The GPU block caching block j of r, or k_none (then a lower tier holds it).
  [[nodiscard]] int32_t block_at(const Request& r, int64_t j) const {
    return m_table.find(key_of(r, j));
  }

  void take_fresh(Request& r, int64_t n) {
    for (int64_t i = 0; i < n; ++i) r.kv_blocks.push_back(take_one());
  }

  /// Takes the free queue's front for new tokens; evicts what it cached (down to the tiers).
  int32_t take_one() {
    const int32_t b = m_free_head;
    unlink_free(b);
    Block& blk = m_blocks[b];
    if (blk.key != 0) {  // evict: its tokens are no longer kept in GPU memory
      if (m_tiers) m_tiers->demote(blk.key);
      m_table.erase(blk.key);
      blk.key = 0;
      ++m_stats.evicted_blocks;
    }
    blk.refs = 1;
    return b;
  }

  /// Enters the request's blocks that `tokens` fills completely in the cache.
  void enter_full_blocks(Request& r, int64_t tokens) {
    const auto full = static_cast<int32_t>(tokens / m_block);
    for (; r.kv_keyed_blocks < full; ++r.kv_keyed_blocks) {
      const uint64_t key = key_of(r, r.kv_keyed_blocks);
      const int32_t b = r.kv_blocks[static_cast<size_t>(r.kv_keyed_blocks)];
      // The first copy of some content stays the cached one (another request may have
      // computed the same tokens at the same time).
      if (m_blocks[b].key == 0 && m_table.insert(key, b)) m_blocks[b].key = key;
    }
  }

  void push_back_free(int32_t b) {
    Block& blk = m_blocks[b];
    blk.prev = m_free_tail;
    blk.next = k_none;
    if (m_free_tail != k_none)
      m_blocks[m_free_tail].next = b;
    else
      m_free_head = b;
    m_free_tail = b;
    ++m_free_count;
  }

  void unlink_free(int32_t b) {
    Block& blk = m_blocks[b];
    if (blk.prev != k_none)
      m_blocks[blk.prev].next = blk.next;
    else
      m_free_head = blk.next;
    if (blk.next != k_none)
      m_blocks[blk.next].prev = blk.prev;
    else
      m_free_tail = blk.prev;
    blk.prev = blk.next = k_none;
    --m_free_count;
  }

  int64_t m_block;
  int32_t m_total;
  std::vector<Block> m_blocks;
  KeyTable m_table;
  int32_t m_free_head = k_none, m_free_tail = k_none, m_free_count = 0;
  PrefixStats m_stats;
  std::unique_ptr<KvTiers> m_tiers;
};

}  // namespace

std::unique_ptr<KvManager> make_prefix_cached_kv(int64_t capacity_tokens, int64_t block_size,
                                                 std::unique_ptr<KvTiers> tiers) {
  return std::make_unique<PrefixCachedKv>(capacity_tokens, block_size, std::move(tiers));
}

}  // namespace servesim
