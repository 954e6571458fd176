#pragma once
// Helpers shared by the iteration-level policies (continuous and its orca / sarathi aliases,
// vllm), which re-form the batch before every step and release a reply as soon as its last
// token is produced.
#include <cstdint>
#include <limits>
#include <memory>

#include "schedulers/factories.h"  // the policies built over it define theirs
#include "schedulers/queue_order.h"
#include "schedulers/scheduler.h"

namespace servesim {

/// No limit on the tokens of a step.
inline constexpr int64_t k_unlimited_tokens = std::numeric_limits<int64_t>::max();

/// Releases every running request that has produced its last token, keeping the others' order.
/// REQUIRES: they are the SchedulerView::finished_this_step() that finished in this step.
void release_finished(SchedulerView& s);

/// Tokens computed by the step being planned: each entry's StepEntry::tokens().
[[nodiscard]] int64_t planned_tokens(const SchedulerView& s);

/// Preemption by swapping (vLLM V0's preemption_mode: swap): a victim's KV goes to host memory
/// over a link and comes back when it resumes, instead of being recomputed.
struct SwapSettings {
  bool enabled = false;              ///< preemption_mode: swap (else recompute)
  int64_t capacity_tokens = 0;       ///< host swap space, in KV tokens
  double bytes_per_token = 0;        ///< KV bytes of one token on one accelerator
  double bandwidth_bytes_per_s = 0;  ///< host <-> accelerator link
  double space_bytes = 0;            ///< host swap space
  /// The bytes per token come from the KV manager (kv.memory sized it), known only once the
  /// replica's KV manager is built: Scheduler::bind_kv calls bind() then.
  bool from_kv = false;
  /// Sets bytes_per_token and the swap capacity it gives. Throws InputError when `bytes` is 0
  /// (a replica whose kv section gives capacity_tokens, not memory).
  void bind(double bytes);
  /// The time to move `tokens` tokens' KV one way, rounded once to the nanosecond.
  [[nodiscard]] Time transfer(int64_t tokens) const {
    return Time::from_seconds(static_cast<double>(tokens) * bytes_per_token /
                              bandwidth_bytes_per_s);
  }
};

/// The settings of the continuous policy (continuous.cpp), which orca and sarathi name.
struct ContinuousSettings {
  int64_t max_num_seqs = 1;
  int64_t max_num_batched_tokens = k_unlimited_tokens;  ///< the token budget of a step
  bool chunked_prefill = false;
  SwapSettings swap;
  QueueOrder order;  ///< `policy`: the waiting queue's order and the preemption victim
};
[[nodiscard]] std::unique_ptr<Scheduler> make_continuous_scheduler(const ContinuousSettings& s);

/// Reads preemption_mode (recompute | swap) and, for swap, swap_space_gb, swap_bandwidth_gb_s
/// and the KV bytes per token (from kv.memory, else the required scheduler key
/// kv_bytes_per_token). Shared by continuous, orca and sarathi.
[[nodiscard]] SwapSettings read_swap_settings(const Cfg& scheduler);

}  // namespace servesim
