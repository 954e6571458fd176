#pragma once
// Pipeline parallelism (`step_time.pipeline_parallel: P`, docs/parallelism.md): a replica's
// layers split into P stages over P groups of tensor_parallel accelerators, with up to P
// micro-batches in flight (vLLM's virtual engines, TensorRT-LLM's in-flight micro-batches).
//
// The engine still runs one scheduler step per replica; this model answers how long that step
// takes when the batch is split into m = min(P, sequences) micro-batches of equal share that
// chase each other through the stages. In steady state every micro-batch advances one token per
// cycle:
//   cycle = max(sum_k (t_k + x_k), m x max_k (t_k + x_k))
// where t_k is stage k's time for one micro-batch and x_k the activation send to the next stage
// (none after the last): latency + tokens x hidden x 2 bytes / link bandwidth. With m = P and
// balanced stages the pipeline is full (cycle = P x one stage); with m < P (few sequences) or
// unbalanced stages some stages idle: the bubble, 1 - m x sum_k (t_k + x_k) / (P x cycle).
//
// Stages hold floor(L / P) layers each; the L mod P left over go one each to the stages just
// before the last (as vLLM's get_pp_indices does), so the last stage, which also runs the final
// norm and LM head, is not the one made longer.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/step_time_model.h"

namespace servesim {

/// The most stages `pipeline_parallel` takes.
inline constexpr int64_t k_max_stages = 1024;

struct PipelineSpec {
  int64_t stages = 1;            ///< P >= 1
  int64_t layers = 1;            ///< the model's layers, >= stages
  double hidden_size = 0;        ///< activation elements per token sent between stages
  double activation_bytes = 2;   ///< bf16 activations
  double link_bytes_per_ms = 0;  ///< one direction of the link between two stages, > 0
  double link_latency_ms = 0;    ///< per send, >= 0
  /// `pipeline_schedule: micro_batches`: the engine keeps up to `stages` batches in flight and
  /// asks pipeline_stage_ms for each one's stage times (sim/pipeline_engine.h); step_ms stays the
  /// closed form.
  bool micro_batches = false;
};

/// How one step splits over the stages (for tests and docs; step_ms returns cycle_ms).
struct PipelineBreakdown {
  int32_t micro_batches = 0;  ///< m = min(P, sequences)
  double stage_max_ms = 0;    ///< the slowest stage, its send included
  double stages_sum_ms = 0;   ///< one micro-batch's latency through every stage and link
  double transfer_ms = 0;     ///< one send between two stages
  double cycle_ms = 0;        ///< the step's duration
  double bubble = 0;          ///< share of stage time idle in the cycle, [0, 1)
};

/// Layers per stage, in stage order, as above. REQUIRES: 1 <= stages <= layers.
[[nodiscard]] std::vector<int64_t> pipeline_stage_layers(int64_t layers, int64_t stages);

/// A pipelined step model from a time split into per-layer work and once-per-step work (final
/// norm, LM head, fixed overhead), both for a micro-batch's shape:
///   per_layer(s) = a1 x A(s) + a2 x B(s), once(s) = o1 x A(s) + o2 x B(s)
/// (B may be null, then a2 = o2 = 0). The once-per-step part runs on the last stage. cost() is
/// A's, per accelerator divided by P, with the cycle as its step_ms.
struct LayerSplit {
  std::unique_ptr<StepTimeModel> a, b;
  double a1 = 0, a2 = 0, o1 = 0, o2 = 0;
};

class PipelineModel final : public StepTimeModel {
 public:
  PipelineModel(LayerSplit split, PipelineSpec spec);
  double step_ms(const StepShape& s) const override { return breakdown(s).cycle_ms; }
  std::optional<StepCost> cost(const StepShape& s) const override;
  PipelineInfo pipeline() const override {
    return {static_cast<int32_t>(m_spec.stages), m_spec.micro_batches};
  }
  int32_t pipeline_stage_ms(const StepShape& s, std::span<double> out) const override;
  [[nodiscard]] PipelineBreakdown breakdown(const StepShape& s) const;
  /// The share of `s` one of m micro-batches carries (counts rounded up).
  [[nodiscard]] static StepShape micro_batch(const StepShape& s, int32_t m);

 private:
  /// Each stage's time for the micro-batch `b` (its send after it) into `out`; returns a send's.
  double stage_times(const StepShape& b, std::span<double> out) const;

  LayerSplit m_split;
  PipelineSpec m_spec;
  std::vector<double> m_layers;  // per stage, as doubles
};

/// Reads `pipeline_parallel` (and the link keys and `pipeline_schedule`) of a step_time section and
/// builds the model with `make` (the kind's factory) when P > 1; P = 1 returns make(c) untouched.
/// Only kinds with a catalogue model (operator, roofline) can be split.
[[nodiscard]] std::unique_ptr<StepTimeModel> make_pipelined(
    const Cfg& step_time, std::unique_ptr<StepTimeModel> (*make)(const Cfg&));

}  // namespace servesim
