#pragma once
// Pipeline parallelism in the engine (docs/parallelism.md): the books of a pipelined replica,
// and, with `step_time.pipeline_schedule: micro_batches`, the batches it keeps in flight.
//
// With micro_batches a replica of P stages holds up to P batches at once. Each stage is a
// resource that runs one batch at a time, first in first out: a batch enters stage 0 when stage
// 0 is free, then each stage k as soon as it has left stage k - 1 and stage k is free, taking
// the step model's time for that stage (its send to the next included). The scheduler plans a
// new batch each time stage 0 frees (and fewer than P are in flight), from the requests in no
// batch in flight: those are hidden from SchedulerView::running() while it plans, and keep the
// KV they hold. A batch's tokens count when it leaves the last stage (Simulation::finish_step).
// Stages are FIFO, so a batch's whole timeline is known when it is planned.
//
// Simulation's member functions for it are in sim/pipeline_engine.cpp; these are their books.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/batch_state.h"
#include "core/time.h"

namespace servesim {

struct ReplicaStats;  // sim/simulation.h
struct Components;    // sim/simulation.h
class Cfg;            // core/config.h

/// A batch in flight through a replica's stages.
struct PipelineBatch {
  std::vector<StepEntry> entries;  ///< its plan, swapped out of BatchState::plan()
  Time exit;                       ///< when it leaves the last stage
};

/// One replica's pipeline with pipeline_schedule: micro_batches.
struct ReplicaPipeline {
  std::vector<Time> stage_free;     ///< when stage k finishes the last batch given to it
  std::vector<PipelineBatch> ring;  ///< P batches; in flight from `head`, `count` of them
  uint32_t head = 0, count = 0;
  std::vector<uint8_t> in_flight;  ///< by slot: 1 while the request is in a batch in flight
  std::vector<uint8_t> mark;       ///< by slot: scratch for putting running() back in order
  std::vector<uint32_t> all_running, merged;  ///< scratch, likewise
  std::vector<Time> stage_time;               ///< scratch: the batch being planned, per stage
  Time last_exit;                             ///< of the newest batch

  [[nodiscard]] bool full() const { return count == ring.size(); }
  /// Whether a new batch may enter now: stage 0 free and fewer than P in flight.
  [[nodiscard]] bool can_start(Time now) const { return !full() && stage_free[0] <= now; }
};

/// summary.json's `pipeline` block, one per stage (Summary::pipeline, docs/metrics.md).
struct PipelineStageSummary {
  double busy_share = 0;  ///< this stage's busy time / the replicas' busy time
};

/// summary.json's `pipeline` block (docs/metrics.md#pipeline): over every pipelined replica.
struct PipelineSummary {
  std::string schedule;  ///< closed_form or micro_batches
  int32_t stages = 0;    ///< the deepest replica's P
  /// Micro-batches in flight, averaged over the time a replica had a step (or batch) in flight.
  double micro_batches_in_flight = 0;
  /// 1 - the stages' busy time / (P x the time a replica had a step or batch in flight).
  double bubble = 0;
  std::vector<PipelineStageSummary> stage_busy;  ///< by stage, from 0
};

/// Refuses, at the config's key, pipeline_schedule: micro_batches with what the engine's
/// micro-batches do not model (pools, speculative decoding, LoRA, admission or abandonment,
/// autoscaling, failures, KV offload). `root` is the scenario the components were built from.
void check_pipeline_schedule(const Cfg& root, const Components& c);

/// The `pipeline` block from the replicas' books; nullopt when no replica is pipelined.
[[nodiscard]] std::optional<PipelineSummary> pipeline_summary(
    const std::vector<ReplicaStats>& replicas);

}  // namespace servesim
