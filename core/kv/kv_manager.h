#pragma once
// KV-cache memory and its admission policy.
//
// Capacity is counted in tokens. A policy decides how much a request holds at each point of its
// life; schedulers ask before admitting or growing a request and never change the counts
// themselves. Every method either succeeds or changes nothing.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/request.h"

namespace servesim {

class KvTiers;

class KvManager {
 public:
  virtual ~KvManager() = default;

  [[nodiscard]] virtual int64_t capacity_tokens() const = 0;
  /// Tokens per block of memory (kv.block_size): what every allocation is rounded up to.
  [[nodiscard]] virtual int64_t block_tokens() const = 0;
  [[nodiscard]] virtual int64_t used_tokens() const = 0;
  [[nodiscard]] int64_t free_tokens() const { return capacity_tokens() - used_tokens(); }

  /// The most this request will hold under this policy: what admission must be sure of when a
  /// whole batch runs to completion (static and dynamic batching).
  [[nodiscard]] virtual int64_t footprint_tokens(const Request& r) const = 0;
  /// Why the request can never be served (empty when it can).
  [[nodiscard]] virtual std::string never_fits(const Request& r) const;

  /// Prefix caching: how many tokens at the start of the request's prefill have their KV cached
  /// and could be reused if it were admitted now (whole blocks, always fewer than
  /// r.prefill_target so that at least one token is computed). 0 without prefix caching.
  /// Non-const only because a manager may work out the request's block identities once.
  [[nodiscard]] virtual int64_t cached_prefix_tokens(Request& /*r*/) { return 0; }
  /// Prefix caching: the identity of the request's KV block j (its content and everything
  /// before it: two requests' blocks j with equal keys hold the same tokens after the same
  /// prefix), for j below cached_prefix_tokens(r) / block_tokens(). SGLang's dfs-weight order
  /// walks these as its radix tree's nodes (schedulers/sglang_dfs.h). 0 without prefix caching.
  [[nodiscard]] virtual uint64_t prefix_block_key(const Request& /*r*/, int64_t /*j*/) const {
    return 0;
  }
  /// Admits a request that holds nothing, giving it room for `tokens` KV tokens, the first
  /// `cached_tokens` of which reuse cached blocks (what cached_prefix_tokens just returned; 0
  /// without prefix caching). The reserve policy takes the whole footprint instead. Returns
  /// false, changing nothing, if it won't fit.
  [[nodiscard]] virtual bool try_admit(Request& r, int64_t cached_tokens, int64_t tokens) = 0;
  /// Whether try_admit(r, cached_tokens, tokens) would succeed now; changes nothing. vLLM's
  /// admission asks it for a request's whole prefill before giving it a first chunk
  /// (scheduler_reserve_full_isl). REQUIRES: as try_admit's.
  [[nodiscard]] virtual bool can_admit(const Request& r, int64_t cached_tokens,
                                       int64_t tokens) const = 0;
  /// Grows a running request's holding to cover `tokens` KV tokens. A request that already
  /// holds `tokens` always succeeds (grow() relies on it).
  [[nodiscard]] virtual bool try_grow(Request& r, int64_t tokens) = 0;
  /// try_grow with the common case (room left in what it holds) decided inline: the per-step
  /// loop calls this for every running sequence.
  [[nodiscard]] bool grow(Request& r, int64_t tokens) {
    return tokens <= r.kv_held_tokens || try_grow(r, tokens);
  }
  /// Swap-in after a preemption by swapping: gives a request that holds nothing fresh room for
  /// `tokens` KV tokens (its context copied back from host memory). Not an admission: no prefix
  /// lookup and no prefix-cache counters. Returns false, changing nothing, if it won't fit.
  [[nodiscard]] virtual bool try_swap_in(Request& r, int64_t tokens) {
    return try_admit(r, 0, tokens);
  }
  /// Lazy growth (the engine's decode streaks, sim/decode_streak.cpp): whether try_grow is
  /// exactly "take the whole blocks of block_tokens() that `tokens` passes beyond what the
  /// request holds, or fail if they are not free", with nothing else kept per request, so that
  /// the engine may take the blocks of many requests' growth at once (take_blocks) and set
  /// their kv_held_tokens itself later. The plain paged policy only.
  [[nodiscard]] virtual bool lazy_growth() const { return false; }
  /// With lazy_growth(): takes `blocks` free blocks for requests whose kv_held_tokens the
  /// caller sets itself; false, changing nothing, if they are not free. A negative count gives
  /// back blocks so taken.
  [[nodiscard]] virtual bool take_blocks(int64_t /*blocks*/) { return false; }
  /// Frees everything the request holds.
  virtual void release(Request& r) = 0;
  /// Whether running requests can run out of memory (and so may be preempted).
  [[nodiscard]] virtual bool may_need_preemption() const = 0;
  /// The replica failed (cluster.failures): what GPU memory cached is lost. REQUIRES: no
  /// request holds anything. The lower tiers (kv.offload) are left as they are.
  virtual void drop_cache() {}

  /// Prefix-cache counters, in tokens: what admissions asked for (their whole prefill) and
  /// what they found cached. Empty when the policy has no prefix cache.
  struct PrefixStats {
    int64_t queried_tokens = 0;
    int64_t hit_tokens = 0;
    int64_t queried_blocks = 0;  ///< full blocks of the prefills that could have been cached
    int64_t hit_blocks = 0;
    int64_t evicted_blocks = 0;  ///< cached blocks whose memory was reused for other tokens
  };
  [[nodiscard]] virtual std::optional<PrefixStats> prefix_stats() const { return std::nullopt; }

  /// The tiers below GPU memory (kv.offload, core/kv/kv_tiers.h); null without them.
  [[nodiscard]] virtual KvTiers* offload() { return nullptr; }
  [[nodiscard]] virtual const KvTiers* offload() const { return nullptr; }

  /// KV bytes one token takes on one accelerator when `kv.memory` sized the pool; 0 when the
  /// section gave capacity_tokens (swap preemption times its transfers with it).
  [[nodiscard]] double bytes_per_token() const { return m_bytes_per_token; }
  void set_bytes_per_token(double bytes) { m_bytes_per_token = bytes; }

 private:
  double m_bytes_per_token = 0;
};

/// What a `kv.memory` map works out for one tensor-parallel group.
struct KvMemory {
  int64_t capacity_tokens = 0;  ///< KV tokens the whole group holds
  double bytes_per_token = 0;   ///< KV bytes one token takes on one accelerator
};
/// Reads a `kv.memory` map. The engine passes models/kv_memory.h's read_kv_memory, which
/// resolves model and hardware names from the catalogue; this library cannot see it.
using KvMemoryReader = KvMemory (*)(const Cfg& memory);

/// The one way to build a KV manager (core/kv/kv_registry.cpp): reads `kv` (policy,
/// capacity_tokens or memory, block_size, ...); each policy's own factory is declared in
/// core/kv/factories.h, for the registry only. `read_memory` sizes the pool
/// when the section gives `memory` (and must then be given); the manager then reports the
/// per-token bytes it found (KvManager::bytes_per_token).
[[nodiscard]] std::unique_ptr<KvManager> make_kv_manager(const Cfg& kv, KvMemoryReader read_memory);
[[nodiscard]] std::vector<std::string> kv_policy_names();

}  // namespace servesim
