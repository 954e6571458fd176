// cpu_overhead: engine CPU time added to whatever a step-time model says a step takes.
//
// GPU kernel profiles (layer profiles, Vidur's operator tables) and fits to them time the
// forward pass only; a serving engine also schedules, prepares inputs, samples and processes
// outputs on the CPU every step. Vidur's cpu_overheads.csv shows that time growing about
// linearly with the batch, so the form is per_step_ms + per_sequence_ms x sequences. It wraps
// the model rather than being a key of each kind, so it composes with any of them.
#include "core/units.h"
#include "models/step_time_model.h"

namespace servesim {
namespace {

class WithCpuOverhead final : public StepTimeModel {
 public:
  WithCpuOverhead(std::unique_ptr<StepTimeModel> inner, CpuOverhead o)
      : m_inner(std::move(inner)), m_overhead(o) {}

  double step_ms(const StepShape& s) const override {
    return m_inner->step_ms(s) + m_overhead.ms(s.sequences);
  }
  // The bytes and flops are the inner model's; only the duration grows (so the utilisation
  // the engine reports counts the CPU time as time the accelerator was not busy).
  std::optional<StepCost> cost(const StepShape& s) const override {
    auto c = m_inner->cost(s);
    if (c) c->step_ms += m_overhead.ms(s.sequences);
    return c;
  }
  PipelineInfo pipeline() const override { return m_inner->pipeline(); }
  // Engine-scheduled micro-batches: the CPU time is the batch's, before it enters stage 0.
  int32_t pipeline_stage_ms(const StepShape& s, std::span<double> out) const override {
    const int32_t m = m_inner->pipeline_stage_ms(s, out);
    if (m_inner->pipeline().micro_batches) out[0] += m_overhead.ms(s.sequences);
    return m;
  }

 private:
  std::unique_ptr<StepTimeModel> m_inner;
  CpuOverhead m_overhead;
};

}  // namespace

std::unique_ptr<StepTimeModel> with_cpu_overhead(std::unique_ptr<StepTimeModel> inner,
                                                 CpuOverhead overhead) {
  return std::make_unique<WithCpuOverhead>(std::move(inner), overhead);
}

std::unique_ptr<StepTimeModel> apply_cpu_overhead(const Cfg& step_time,
                                                  std::unique_ptr<StepTimeModel> inner) {
  const auto c = step_time.optional_child("cpu_overhead");
  if (!c) return inner;
  const CpuOverhead o{plausible_real(*c, "per_step_ms", 0.0, units::k_cost_ms),
                      plausible_real(*c, "per_sequence_ms", 0.0, units::k_cost_ms)};
  return with_cpu_overhead(std::move(inner), o);
}

}  // namespace servesim
