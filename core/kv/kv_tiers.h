#pragma once
// Tiered KV offload (kv.offload): host memory, disk and remote tiers below the GPU prefix cache.
//
// A block the GPU prefix cache evicts (its key about to be forgotten) moves down into the first
// tier at its most recently used end; a full tier pushes its least recently used block into the
// next one, and the last tier drops it. A block already kept in some tier is only marked used
// there. A prefix lookup that misses in GPU memory goes on through the tiers in order: a block
// found in tier t is reloaded (copied back: it stays in t, marked used) instead of computed.
// The reloads one admission makes cost, per tier t that served n_t of its blocks,
//   n_t x block_bytes / bandwidth_t + latency_t
// and these add up over the tiers and over the admissions of a step (one link into the GPU).
// The step then waits max(0, reload - compute) (overlap: layerwise, LMCache's use_layerwise
// and vLLM's KV connector wait_for_layer_load) or the whole reload before computing (overlap:
// none, a bulk load before the forward pass). docs/kv-offload.md has the sources.
//
// A tier with shared: true is one store for all the replicas of a pool (Mooncake Store,
// LMCache's remote backend): share_offload_tiers points a replica's chain at the first's.
// Capacities, bandwidths and block bytes are per accelerator, like swap_space_gb.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/time.h"

namespace servesim {

/// One tier's figures (kv.offload.tiers[i]).
struct TierSpec {
  std::string name;
  double capacity_bytes = 0;         ///< per accelerator
  double bandwidth_bytes_per_s = 0;  ///< its link into the GPU, per accelerator
  double latency_s = 0;              ///< per admission that reloads from it
  bool shared = false;               ///< one store for all the pool's replicas
};

/// summary.json's offload.tiers[i]: per tier, what lookups found and what reloads cost.
struct TierStats {
  std::string name;
  bool shared = false;
  int64_t capacity_blocks = 0;
  int64_t queried_blocks = 0;  ///< full prefill blocks that missed every level above this one
  int64_t hit_blocks = 0;      ///< ... and were found (and reloaded) here
  int64_t queried_tokens = 0;
  int64_t hit_tokens = 0;
  int64_t declined_blocks = 0;  ///< found here but recomputed (reload: if_faster)
  int64_t reloads = 0;          ///< admissions that reloaded blocks from this tier
  double reload_bytes = 0;
  double reload_s = 0;
  int64_t stored_blocks = 0;      ///< blocks that entered the tier (moved down into it)
  int64_t moved_down_blocks = 0;  ///< blocks pushed out of it (into the next tier, or dropped)
  int64_t resident_blocks = 0;    ///< held at the end; stored = resident + moved down
};

/// summary.json's offload block.
struct OffloadStats {
  std::string overlap;  ///< layerwise or none
  std::string reload;   ///< always or if_faster
  std::vector<TierStats> tiers;
  int64_t prefill_tokens_saved = 0;  ///< tokens reloaded from the tiers instead of computed
  double reload_s = 0;               ///< reload time the steps asked for
  double stall_s = 0;                ///< what the reloads added to the steps
  int64_t reload_steps = 0;          ///< steps that reloaded something
};

class TierStore;
class KvManager;

/// A replica's tiers below its GPU prefix cache. Not thread-safe; a shared tier is used by the
/// replicas of one simulation in turn.
class KvTiers {
 public:
  enum class Overlap { layerwise, none };
  /// `block_tokens`: the GPU block; `bytes_per_token` 0 until bind() (kv.memory sizes it).
  KvTiers(const std::vector<TierSpec>& specs, Overlap overlap, bool if_faster,
          double prefill_tokens_per_s, int64_t block_tokens, double bytes_per_token);
  ~KvTiers();
  KvTiers(const KvTiers&) = delete;
  KvTiers& operator=(const KvTiers&) = delete;

  /// Sets the KV bytes of one token (from kv.memory), which sizes the tiers in blocks.
  void bind(double bytes_per_token);
  [[nodiscard]] double block_bytes() const { return m_block_bytes; }
  [[nodiscard]] size_t size() const { return m_tiers.size(); }

  /// The GPU cache forgets `key`: keep it in the first tier (or mark it used where it is).
  void demote(uint64_t key);
  /// The first tier holding `key`, or -1.
  [[nodiscard]] int find(uint64_t key) const;
  /// Seconds to reload n blocks from tier t (n x block bytes / bandwidth + latency; 0 for n 0).
  [[nodiscard]] double reload_seconds(int t, int64_t n) const;
  /// With reload: if_faster, whether reloading these blocks (per tier counts) beats computing
  /// them; always true with reload: always.
  [[nodiscard]] bool worth_reloading(const int64_t* per_tier_blocks) const;

  /// One admission's lookup: a prefill of `queried_tokens` (`queried_blocks` full blocks),
  /// `gpu_hits` blocks found in GPU memory, `per_tier_hits[t]` reloaded from tier t,
  /// `per_tier_declined[t]` found in tier t but computed. Counts the lookups per tier and
  /// charges the reloads to the current step (the caller marks the blocks used with touch()).
  void record_admission(int64_t queried_tokens, int64_t queried_blocks, int64_t gpu_hits,
                        const int64_t* per_tier_hits, const int64_t* per_tier_declined);
  void touch(int t, uint64_t key);

  /// The step's compute `body` with this step's reloads added by the overlap rule; resets them.
  [[nodiscard]] Time step_with_reload(Time body);

  /// Makes tier t this chain's view of `other`'s tier t (a shared tier). REQUIRES same specs.
  void share_tier(size_t t, const KvTiers& other);
  [[nodiscard]] const TierStore* store(size_t t) const { return m_tiers[t].get(); }
  [[nodiscard]] TierStats tier_stats(size_t t) const;
  [[nodiscard]] const OffloadStats& run_stats() const { return m_stats; }

  /// Scratch for the GPU cache's lookups: one counter per tier, reused (no allocation).
  [[nodiscard]] int64_t* scratch(size_t which) { return m_scratch[which].data(); }

 private:
  std::vector<std::shared_ptr<TierStore>> m_tiers;
  std::vector<TierStats> m_lookup;  // this replica's lookup and reload counters
  std::vector<int64_t> m_scratch[3];
  Overlap m_overlap;
  bool m_if_faster;
  double m_prefill_tokens_per_s;
  int64_t m_block_tokens;
  double m_block_bytes = 0;
  double m_pending_reload_s = 0;
  OffloadStats m_stats;
};

/// Reads kv.offload (REQUIRES kv has it); `block_tokens` is kv.block_size.
[[nodiscard]] std::unique_ptr<KvTiers> read_offload(const Cfg& kv, int64_t block_tokens);

/// Refuses a tier smaller than one block (once the block's bytes are known).
void check_offload_capacity(const Cfg& offload, const KvTiers& tiers);

/// Points `other`'s shared tiers at `first`'s stores (replicas of one pool); nothing when
/// either has no offload.
void share_offload_tiers(const KvManager& first, KvManager& other);

/// Adds a replica's offload figures to the run's. A shared tier's store counters are counted
/// once: `seen` holds the stores already added.
void add_offload_stats(std::optional<OffloadStats>& into, const KvTiers& tiers,
                       std::vector<const TierStore*>& seen);

}  // namespace servesim
