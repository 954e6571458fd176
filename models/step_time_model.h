#pragma once
// Step-time models: how long one engine step (one forward pass over the batch) takes.
//
// CONTRACT: step_ms is a pure function of the step's shape: no state, no randomness, the same
// shape always gives the same time. The engine rounds the result to whole nanoseconds once.
// A model that knows what a step moves and computes (roofline) also reports it through cost();
// the engine sums it into the run's bandwidth and compute utilisation (docs/metrics.md).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/config.h"

namespace servesim {

struct StepShape {
  int32_t sequences = 0;         ///< seats in the step: prefilling + decoding + padding
  int32_t decode_sequences = 0;  ///< decoding and padding seats
  int64_t prefill_tokens = 0;    ///< prompt tokens computed in this step
  double prefill_tokens_sq = 0;  ///< sum over prefill chunks of chunk length squared
  /// KV tokens already stored for the prefilling requests before this step's chunks (non-zero
  /// for a chunk that continues an earlier one): what those chunks' attention reads besides
  /// themselves.
  int64_t prefill_context_tokens = 0;
  /// KV tokens read by decoding seats: each one's stored context plus the token it computes.
  int64_t decode_context_tokens = 0;
  /// The longest and shortest of those per-seat reads (0 when unknown: a shape built from
  /// measurements rather than by the engine); a model may charge uneven lengths more than
  /// their mean.
  int64_t decode_context_max = 0;
  int64_t decode_context_min = 0;
};

/// What one step moves and computes on one accelerator (one of a tensor-parallel group).
struct StepCost {
  double bytes = 0;               ///< memory traffic: weights, KV read and KV written
  double flops = 0;               ///< arithmetic (OPs for integer dtypes)
  bool bandwidth_bound = false;   ///< the memory term, not the compute term, set the step time
  double ideal_ms_bandwidth = 0;  ///< bytes / peak bandwidth
  double ideal_ms_compute = 0;    ///< flops / peak FLOP/s
  double peak_bytes_per_s = 0;    ///< the accelerator's peak memory bandwidth
  double peak_flops_per_s = 0;    ///< its dense peak in the model's compute dtype
  double step_ms = 0;             ///< what step_ms() returns for the same shape
};

/// How a pipelined model's micro-batches are run (StepTimeModel::pipeline).
struct PipelineInfo {
  int32_t stages = 0;          ///< pipeline stages; 0: not pipelined
  bool micro_batches = false;  ///< the engine schedules them (pipeline_schedule: micro_batches)
};

struct DecodeStretch;  // models/decode_stretch.h

class StepTimeModel {
 public:
  virtual ~StepTimeModel() = default;
  /// REQUIRES: shape.sequences >= 1. Returns the step's duration in milliseconds, > 0.
  [[nodiscard]] virtual double step_ms(const StepShape& shape) const = 0;
  /// REQUIRES: as step_ms. The step's bytes and flops (and its step_ms, so the engine asks
  /// once), or nullopt for a model that does not know them (measured tables, fitted lines).
  /// Pure, like step_ms; must not allocate.
  [[nodiscard]] virtual std::optional<StepCost> cost(const StepShape&) const {
    return std::nullopt;
  }
  /// Looks up what the decode-only steps of `batch` sequences share (models/decode_stretch.h),
  /// so that the engine can cost them without calling cost() where the stretch covers them;
  /// false (`out` untouched) for a model that has none. Pure; must not allocate.
  virtual bool decode_stretch(int32_t /*batch*/, DecodeStretch& /*out*/) const { return false; }
  /// Pipelined models (models/pipeline.h, docs/parallelism.md): the stages and who schedules
  /// the micro-batches; stages 0 for any other model. Wrappers pass it through.
  [[nodiscard]] virtual PipelineInfo pipeline() const { return {}; }
  /// REQUIRES: pipeline().stages > 0, out.size() >= it. Each stage's busy time in ms: with the
  /// closed form, over the step's m micro-batches (its sends included), returning m; with
  /// micro_batches, for `s` run as one micro-batch through the stages, returning 1, the engine's
  /// CPU time (cpu_overhead, host time) on stage 0. Pure; must not allocate.
  virtual int32_t pipeline_stage_ms(const StepShape&, std::span<double>) const { return 0; }
};

/// The one way to build a step-time model (models/registry.cpp): reads `step_time.kind` and
/// builds that model from the rest of the section. Each model's own factory is declared in
/// models/factories.h, for the registry only.
[[nodiscard]] std::unique_ptr<StepTimeModel> make_step_time_model(const Cfg& step_time);
[[nodiscard]] std::vector<std::string> step_time_model_names();

/// CPU time an engine spends on every step outside the GPU kernels (scheduling, preparing
/// inputs, sampling, processing outputs), which kernel profiles and GPU-only fits leave out:
/// per_step_ms + per_sequence_ms x sequences. Any model's section may carry it as
/// `cpu_overhead: {per_step_ms: A, per_sequence_ms: B}`; make_step_time_model then adds it to
/// every step's step_ms (and to cost()'s step_ms), whatever the kind.
struct CpuOverhead {
  double per_step_ms = 0;      ///< >= 0
  double per_sequence_ms = 0;  ///< >= 0, for each seat in the step
  [[nodiscard]] double ms(int32_t sequences) const {
    return per_step_ms + per_sequence_ms * static_cast<double>(sequences);
  }
};

/// `inner` plus `overhead` on every step. REQUIRES: both figures >= 0.
[[nodiscard]] std::unique_ptr<StepTimeModel> with_cpu_overhead(std::unique_ptr<StepTimeModel> inner,
                                                               CpuOverhead overhead);
/// Reads the optional `cpu_overhead` map of a step_time section and, when present, wraps `inner`.
[[nodiscard]] std::unique_ptr<StepTimeModel> apply_cpu_overhead(
    const Cfg& step_time, std::unique_ptr<StepTimeModel> inner);

}  // namespace servesim
