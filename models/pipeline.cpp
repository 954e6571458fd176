// pipeline: a step timed as micro-batches flowing through pipeline stages (models/pipeline.h,
// docs/parallelism.md).
#include "models/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "core/units.h"
#include "models/catalog.h"
#include "models/factories.h"

namespace servesim {

std::vector<int64_t> pipeline_stage_layers(int64_t layers, int64_t stages) {
  std::vector<int64_t> n(static_cast<size_t>(stages), layers / stages);
  // The remainder goes one each to the stages just before the last, the last stage excepted
  // while there are others (it also runs the LM head).
  int64_t left = layers % stages;
  for (int64_t k = stages - 2; left > 0 && k >= 0; --k, --left) ++n[static_cast<size_t>(k)];
  if (left > 0) ++n.back();  // only when stages == 1 (then left is 0 anyway)
  return n;
}

PipelineModel::PipelineModel(LayerSplit split, PipelineSpec spec)
    : m_split(std::move(split)), m_spec(spec) {
  for (int64_t n : pipeline_stage_layers(spec.layers, spec.stages))
    m_layers.push_back(static_cast<double>(n));
}

StepShape PipelineModel::micro_batch(const StepShape& s, int32_t m) {
  const auto up = [m](int64_t x) { return (x + m - 1) / m; };
  StepShape b = s;
  b.sequences = static_cast<int32_t>(up(s.sequences));
  b.decode_sequences = static_cast<int32_t>(up(s.decode_sequences));
  b.prefill_tokens = up(s.prefill_tokens);
  b.prefill_tokens_sq = s.prefill_tokens_sq / m;
  b.prefill_context_tokens = up(s.prefill_context_tokens);
  b.decode_context_tokens = up(s.decode_context_tokens);
  return b;
}

double PipelineModel::stage_times(const StepShape& b, std::span<double> out) const {
  const double a = m_split.a->step_ms(b);
  const double bt = m_split.b ? m_split.b->step_ms(b) : 0.0;
  const double per_layer = std::max(0.0, m_split.a1 * a + m_split.a2 * bt);
  const double once = std::max(0.0, m_split.o1 * a + m_split.o2 * bt);
  const auto tokens = static_cast<double>(b.prefill_tokens + b.decode_sequences);
  const double transfer_ms = m_spec.link_latency_ms + tokens * m_spec.hidden_size *
                                                          m_spec.activation_bytes /
                                                          m_spec.link_bytes_per_ms;
  for (size_t k = 0; k < m_layers.size(); ++k) {
    const bool last = k + 1 == m_layers.size();
    out[k] = m_layers[k] * per_layer + (last ? once : transfer_ms);
  }
  return transfer_ms;
}

int32_t PipelineModel::pipeline_stage_ms(const StepShape& s, std::span<double> out) const {
  if (m_spec.micro_batches) {
    (void)stage_times(s, out);
    return 1;
  }
  const auto p = static_cast<int32_t>(m_spec.stages);
  const int32_t m = std::max(1, std::min(p, s.sequences));
  (void)stage_times(micro_batch(s, m), out);
  for (size_t k = 0; k < m_layers.size(); ++k) out[k] *= m;
  return m;
}

PipelineBreakdown PipelineModel::breakdown(const StepShape& s) const {
  PipelineBreakdown r;
  const auto p = static_cast<int32_t>(m_spec.stages);
  r.micro_batches = std::max(1, std::min(p, s.sequences));
  std::array<double, k_max_stages> t{};
  r.transfer_ms = stage_times(micro_batch(s, r.micro_batches), t);
  double busy = 0;
  for (size_t k = 0; k < m_layers.size(); ++k) {
    r.stage_max_ms = std::max(r.stage_max_ms, t[k]);
    busy += t[k];
  }
  r.stages_sum_ms = busy;
  r.cycle_ms = std::max(busy, r.micro_batches * r.stage_max_ms);
  r.bubble = 1.0 - r.micro_batches * busy / (static_cast<double>(p) * r.cycle_ms);
  return r;
}

std::optional<StepCost> PipelineModel::cost(const StepShape& s) const {
  std::optional<StepCost> c = m_split.a->cost(s);
  if (!c) return c;
  const auto p = static_cast<double>(m_spec.stages);
  c->bytes /= p;
  c->flops /= p;
  c->ideal_ms_bandwidth /= p;
  c->ideal_ms_compute /= p;
  c->step_ms = step_ms(s);
  return c;
}

std::unique_ptr<StepTimeModel> make_pipelined(const Cfg& c,
                                              std::unique_ptr<StepTimeModel> (*make)(const Cfg&)) {
  const int64_t stages = c.get_int("pipeline_parallel", 1, {1, k_max_stages});
  // The link keys are checked whatever P is (a sweep over pipeline_parallel keeps them at 1).
  const std::optional<double> link_given =
      optional_plausible_real(c, "pipeline_link_gb_per_s", units::k_gb_per_s);
  const double latency_us =
      plausible_real(c, "pipeline_link_latency_us", 10.0, units::k_latency_us);
  const bool micro_batches = c.get_choice("pipeline_schedule", "closed_form",
                                          {"closed_form", "micro_batches"}) == "micro_batches";
  if (stages == 1) return make(c);
  const std::string kind = c.get_string("kind");
  if (kind != "operator" && kind != "roofline")
    c.fail("pipeline_parallel",
           fmt::format("> 1 needs a kind that knows the model's layers (operator or roofline), "
                       "not {}",
                       kind));
  const ModelSpec model = read_model(c, "model");
  const HardwareSpec hw = read_hardware(c, "hardware");
  if (stages > model.layers)
    c.fail("pipeline_parallel",
           fmt::format("more stages than {}'s {} layers", model.name, model.layers));
  PipelineSpec spec;
  spec.stages = stages;
  spec.layers = model.layers;
  spec.hidden_size = static_cast<double>(model.hidden_size);
  // One direction of the accelerator's own link (the catalogue gives both together): stages
  // in one node over NVLink. Between nodes, give the network's figure.
  const double link_gb_per_s = link_given.value_or(hw.interconnect_gb_per_s / 2);
  if (!(link_gb_per_s > 0))
    c.fail("hardware", fmt::format("{} states no interconnect_gb_per_s: give "
                                   "pipeline_link_gb_per_s",
                                   hw.name));
  spec.link_bytes_per_ms = link_gb_per_s * 1e6;
  spec.link_latency_ms = latency_us / 1e3;
  spec.micro_batches = micro_batches;

  LayerSplit split;
  if (kind == "operator") {
    // The operator model is linear in its layer count (every layer term is layers x a curve), so
    // models of 1 and 2 layers give one layer's time, B - A, and the once-per-step rest, 2A - B.
    split.a = make_operator_stage_model(c, 1);
    split.b = make_operator_stage_model(c, 2);
    split.a1 = -1;
    split.a2 = 1;
    split.o1 = 2;
    split.o2 = -1;
  } else {
    // The roofline has no separate LM head: each layer takes its share of the whole step.
    split.a = make(c);
    split.a1 = 1.0 / static_cast<double>(model.layers);
  }
  return std::make_unique<PipelineModel>(std::move(split), spec);
}

}  // namespace servesim
