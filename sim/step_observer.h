#pragma once
// Who watches the engine step by step: per-step output (steps.csv), timelines, progress. The
// engine calls every observer once per step, when the step is planned and its duration known.
// Observers must not keep the record: it is reused for the next step.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/grow_array.h"
#include "core/time.h"
#include "sim/pool.h"

namespace servesim {

/// One step as planned: its shape, its cost and the replica's state when it started.
struct StepRecord {
  Time start;
  Time duration;
  uint32_t replica = 0;
  int32_t sequences = 0;          ///< entries in the step (padding seats included)
  int32_t prefill_sequences = 0;  ///< entries computing part of a prefill
  int64_t prefill_tokens = 0;     ///< prompt (or recompute) tokens computed
  int32_t decode_tokens =
      0;  ///< decode entries' tokens: 1 each, a verify its 1 + drafts (padding not counted)
  int64_t kv_used_tokens = 0;  ///< KV held once the step's requests have their blocks
  int64_t kv_capacity_tokens = 0;
  int32_t waiting = 0;      ///< requests queued on the replica when the step started
  int32_t running = 0;      ///< requests admitted (running) when the step started
  int64_t preemptions = 0;  ///< preemptions on the replica so far (cumulative)
  /// -1: the step-time model reports no cost; 0: bandwidth-bound; 1: compute-bound.
  int8_t bound = -1;
  double bytes = 0;  ///< per accelerator, when the model reports a cost
  double flops = 0;
};

/// Disaggregation: one request's KV moved from a prefill replica to a decode replica, reported
/// once the decode replica has admitted it.
struct TransferRecord {
  uint64_t request = 0;  ///< RequestSpec::id
  uint32_t from = 0, to = 0;
  Time started;    ///< the end of the prefill step that produced the first token
  Time delivered;  ///< the KV is at the decode replica
  Time admitted;   ///< the decode replica took it (later than delivered under back-pressure)
};

/// Where an ends_only observer keeps one replica's step ends (StepObserver::end_sink): while
/// the array holds fewer than `limit`, the engine appends an end (in ns) to it itself, in place
/// of calling on_step_end, which it calls at the limit.
struct StepEndSink {
  GrowArray<int64_t>* ends = nullptr;  ///< none: on_step_end for every end
  size_t limit = 0;
  /// Appends `end_ns` and returns true, or returns false (doing nothing): call on_step_end.
  [[gnu::always_inline]] bool add(int64_t end_ns) const {
    if (ends == nullptr || ends->size() >= limit) return false;
    ends->push_back(end_ns);
    return true;
  }
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void on_step(const StepRecord& s) = 0;
  /// Whether on_step reads only the step's replica, its end (start + duration) and
  /// kv_capacity_tokens: the engine then calls on_step_end instead, without building the
  /// record (asked once, when the observer is added). Callers that have the record at hand
  /// (the parallel engine's replay) may still call on_step.
  [[nodiscard]] virtual bool ends_only() const { return false; }
  /// An ends_only observer's step: replica `replica`'s step ending at `end`.
  virtual void on_step_end(uint32_t /*replica*/, Time /*end*/, int64_t /*kv_capacity_tokens*/) {}
  /// An ends_only observer's array for replica `replica`'s ends, whose appends stand for
  /// on_step_end calls with this `kv_capacity_tokens` while it has room; none by default. The
  /// engine asks again before each run of steps it appends (a decode streak's): the array must
  /// stay where it is until the observer's next on_step_end for another replica.
  [[nodiscard]] virtual StepEndSink end_sink(uint32_t /*replica*/, int64_t /*kv_capacity_tokens*/) {
    return {};
  }
  /// Once, before the first event: the engine's replica count and its cluster.pools (empty
  /// without pools; replica i of pool p is p.first_replica + i).
  virtual void on_start(uint32_t /*replicas*/, const std::vector<PoolSpec>& /*pools*/) {}
  /// Each KV transfer of a disaggregated run, as its decode replica admits it.
  virtual void on_transfer(const TransferRecord& /*t*/) {}
};

}  // namespace servesim
