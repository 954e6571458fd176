// roofline: a step lasts as long as the slower of moving its bytes and doing its arithmetic, each
// at a fraction of the accelerator's peak, plus a fixed overhead and, under tensor parallelism,
// two all-reduces per layer. Per accelerator of a group of tp:
//   step_ms = max(bytes / (bandwidth x bandwidth_efficiency),
//                 flops / (peak FLOP/s x compute_efficiency)) + overhead_ms + all-reduce time
//   bytes   = (active_parameters x weight bytes                    every weight read once a step
//              + decode_context_tokens x KV bytes per token        KV read by decoding seats
//              + prefill_context_tokens x KV bytes per token       read by continuing chunks
//              + (prefill_tokens + decode_sequences) x KV bytes)   KV written for new tokens
//             / tp
//   flops   = (2 x active_parameters x tokens + 4 x layers x heads x head_dim x pairs) / tp
//             tokens = prefill_tokens + decode_sequences
//             pairs  = decode_context_tokens + sum(chunk^2) / 2  (query-key pairs attended)
//   all-reduce time = 2 x layers x 2 (tp-1)/tp x (tokens x hidden_size x 2 bytes) / interconnect
// Approximations, stated in docs/config.md: a mixture of experts reads only its active weights
// (right at small batch, low at large batch where most experts are hit); a continuing prefill
// chunk reads its request's earlier KV, but its FLOPs count only the pairs within the chunk;
// padding seats cost as decoding ones; KV heads are assumed to split evenly over tp.
#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"
#include "models/catalog.h"
#include "models/decode_stretch.h"
#include "models/factories.h"
#include "models/step_work.h"

namespace servesim {
namespace {

class RooflineModel final : public StepTimeModel {
 public:
  /// Everything per accelerator, in bytes, FLOPs and seconds.
  struct Params {
    StepWork work;                 ///< bytes and flops of a shape (models/step_work.h)
    double allreduce_s_per_token;  ///< 0 when tp is 1
    double peak_bytes_per_s;
    double peak_flops_per_s;
    double bandwidth_efficiency;
    double compute_efficiency;
    double overhead_ms;
  };
  explicit RooflineModel(Params p) : m_p(p) {
    // decode_stretch's terms that no batch changes.
    m_stretch.roofline = true;  // length_end stays 0 (DecodeStretch::Roofline)
    m_stretch.base_ms = m_p.overhead_ms;
    m_stretch.weight_bytes = m_p.work.weight_bytes;
    m_stretch.kv_bytes_per_token = m_p.work.kv_bytes_per_token;
    m_stretch.flops_per_pair = m_p.work.flops_per_pair;
    m_stretch.peak_bytes_per_s = m_p.peak_bytes_per_s;
    m_stretch.peak_flops_per_s = m_p.peak_flops_per_s;
    m_stretch.rf.bytes_per_s = m_p.peak_bytes_per_s * m_p.bandwidth_efficiency;
    m_stretch.rf.flops_per_s = m_p.peak_flops_per_s * m_p.compute_efficiency;
  }

  double step_ms(const StepShape& s) const override { return evaluate(s).step_ms; }

  std::optional<StepCost> cost(const StepShape& s) const override {
    const Terms t = evaluate(s);
    StepCost c;
    c.bytes = t.bytes;
    c.flops = t.flops;
    c.bandwidth_bound = t.memory_s >= t.compute_s;
    c.ideal_ms_bandwidth = t.bytes / m_p.peak_bytes_per_s * 1e3;
    c.ideal_ms_compute = t.flops / m_p.peak_flops_per_s * 1e3;
    c.peak_bytes_per_s = m_p.peak_bytes_per_s;
    c.peak_flops_per_s = m_p.peak_flops_per_s;
    c.step_ms = t.step_ms;
    return c;
  }

  // evaluate's terms at a decode-only batch: every batch has one, as every length (no tables).
  bool decode_stretch(int32_t batch, DecodeStretch& out) const override {
    if (batch <= 0) return false;
    out = m_stretch;
    out.batch = batch;
    out.batch_count = static_cast<double>(batch);  // evaluate's tokens
    out.token_flops = m_p.work.flops_per_token * out.batch_count;
    out.rf.allreduce_s = m_p.allreduce_s_per_token * out.batch_count;
    return true;
  }

 private:
  struct Terms {
    double bytes, flops, memory_s, compute_s, step_ms;
  };

  [[nodiscard]] Terms evaluate(const StepShape& s) const {
    const auto tokens = static_cast<double>(s.prefill_tokens + s.decode_sequences);
    Terms t{};
    t.bytes = m_p.work.bytes(s);
    t.flops = m_p.work.flops(s);
    t.memory_s = t.bytes / (m_p.peak_bytes_per_s * m_p.bandwidth_efficiency);
    t.compute_s = t.flops / (m_p.peak_flops_per_s * m_p.compute_efficiency);
    const double allreduce_s = m_p.allreduce_s_per_token * tokens;
    t.step_ms = (std::max(t.memory_s, t.compute_s) + allreduce_s) * 1e3 + m_p.overhead_ms;
    return t;
  }

  Params m_p;
  DecodeStretch m_stretch;  ///< decode_stretch's answer but for the batch's terms
};

/// The peak for `compute`, or a message naming what the chip has.
double peak_for(const Cfg& c, const HardwareSpec& hw, Dtype compute) {
  if (const auto peak = hw.peak_flops_per_s(compute)) return *peak;
  const std::string msg =
      fmt::format("{} has no {} peak (it has {}); set compute_dtype to one of those", hw.name,
                  dtype_name(compute), join_names(hw.supported_dtypes()));
  c.fail(c.has("compute_dtype") ? "compute_dtype" : "hardware", msg);
}

}  // namespace

std::unique_ptr<StepTimeModel> make_roofline_model(const Cfg& c) {
  const ModelSpec model = read_model(c, "model");
  const HardwareSpec hw = read_hardware(c, "hardware");
  const Dtype weight = read_dtype(c, "weight_dtype", Dtype::Bf16);
  const Dtype kv = read_dtype(c, "kv_dtype", weight);
  const Dtype compute = read_dtype(c, "compute_dtype", weight);
  const int64_t tp = c.get_int("tensor_parallel", 1, {1, 1024});
  const RealRange share{0.0, 1.0, true};
  RooflineModel::Params p{};
  p.bandwidth_efficiency = c.get_real("bandwidth_efficiency", 0.8, share);
  p.compute_efficiency = c.get_real("compute_efficiency", 0.6, share);
  p.overhead_ms = plausible_real(c, "overhead_ms", 0.0, units::k_cost_ms);
  p.peak_flops_per_s = peak_for(c, hw, compute);
  p.peak_bytes_per_s = hw.bandwidth_bytes_per_s();

  const auto n = static_cast<double>(tp);
  // Pipeline stages (models/pipeline.h) each hold their share of the layers.
  const auto pp = static_cast<double>(c.get_int("pipeline_parallel", 1, {1, 1024}));
  if (model.weight_bytes(weight) / n / pp > hw.memory_bytes())
    c.fail("model",
           fmt::format("{} in {} takes {:.1f} GB of weights per accelerator at "
                       "tensor_parallel {}{}, more than {}'s {} GB",
                       model.name, dtype_name(weight), model.weight_bytes(weight) / n / pp / 1e9,
                       tp, pp > 1 ? fmt::format(" x pipeline_parallel {}", pp) : "", hw.name,
                       hw.memory_gb));
  p.work = StepWork::of(model, weight, kv, n);
  // Ring all-reduce: each accelerator sends and receives 2 (tp-1)/tp of the buffer, twice a layer
  // (after attention and after the MLP), on 16-bit activations.
  const double activation_bytes_per_token = static_cast<double>(model.hidden_size) * 2.0;
  p.allreduce_s_per_token = 2.0 * static_cast<double>(model.layers) * 2.0 * (n - 1) / n *
                            activation_bytes_per_token / (hw.interconnect_gb_per_s * 1e9);
  return std::make_unique<RooflineModel>(p);
}

}  // namespace servesim
