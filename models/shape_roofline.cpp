// The shape-aware roofline (forms in models/shape_roofline.h): datasheet figures times efficiency
// curves fitted by scripts/fit_shape_roofline.py. Every curve is read once, at construction;
// the methods are pure arithmetic on it.
#include "models/shape_roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "core/units.h"
#include "models/embedded_catalog.h"

namespace servesim {

/// configs/shape-roofline/*.yaml, embedded at build time (models/shape_roofline_data.cpp.in).
std::span<const EmbeddedFile> embedded_shape_roofline_fits();

namespace {

struct GemmCurve {
  double compute_eff, m_half, nk_half, bandwidth_eff, weight_half_bytes, latency_ms;
};
struct ContextCurve {
  double compute_eff, isl_half, work_half, bandwidth_eff, latency_ms;
};
struct GenerationCurve {
  double bandwidth_eff, sequence_half_bytes, latency_ms, per_sequence_ms;
};
struct MoeCurve {
  double compute_eff, rows_half, bandwidth_eff, latency_ms, per_expert_ms;
};
struct AllReduceCurve {
  double bandwidth_eff, half_bytes, latency_ms, per_gpu_ms;
};
struct ElementwiseCurve {
  double bandwidth_eff, latency_ms;
};

// The variants a fit file may hold, by the tables' names; anything else is an unknown key.
const std::vector<std::string> k_matmul_dtypes{"bfloat16", "fp8", "fp8_block"};
const std::vector<std::string> k_context_variants{"bfloat16_kv_bfloat16", "bfloat16_kv_fp8",
                                                  "fp8_kv_fp8"};
const std::vector<std::string> k_generation_variants{"bfloat16_kv_bfloat16", "bfloat16_kv_fp8"};

struct Fit {
  std::string file;
  std::map<std::string, GemmCurve> gemm;
  std::map<std::string, ContextCurve> context;
  std::map<std::string, GenerationCurve> generation;
  std::map<std::string, MoeCurve> moe;
  std::optional<AllReduceCurve> allreduce;
  std::optional<ElementwiseCurve> elementwise;
};

// An efficiency above 1 would beat the datasheet.
constexpr RealRange k_efficiency{0.0, 1.0, true};

/// Reads each present variant of `section` (one of `variants`) with `read`.
template <typename Curve, typename Read>
std::map<std::string, Curve> read_variants(const Cfg& root, const char* section,
                                           const std::vector<std::string>& variants, Read read) {
  std::map<std::string, Curve> out;
  const auto c = root.optional_child(section);
  if (!c) return out;
  for (const std::string& v : variants)
    if (const auto curve = c->optional_child(v)) out.emplace(v, read(*curve));
  return out;
}

Fit parse_fit(const std::string& text, const std::string& file) {
  auto doc = std::make_shared<Document>(text, file);
  const Cfg root = Cfg::root(doc);
  Fit f;
  f.file = file;
  f.gemm = read_variants<GemmCurve>(root, "gemm", k_matmul_dtypes, [](const Cfg& c) {
    return GemmCurve{c.get_real("compute_efficiency", k_efficiency),
                     plausible_real(c, "m_half_rows", units::k_half_point),
                     plausible_real(c, "nk_half", units::k_half_point),
                     c.get_real("bandwidth_efficiency", k_efficiency),
                     plausible_real(c, "weight_half_bytes", units::k_half_point),
                     plausible_real(c, "latency_ms", units::k_cost_ms)};
  });
  f.context =
      read_variants<ContextCurve>(root, "context_attention", k_context_variants, [](const Cfg& c) {
        return ContextCurve{c.get_real("compute_efficiency", k_efficiency),
                            plausible_real(c, "isl_half_tokens", units::k_half_point),
                            plausible_real(c, "work_half", units::k_half_point),
                            c.get_real("bandwidth_efficiency", k_efficiency),
                            plausible_real(c, "latency_ms", units::k_cost_ms)};
      });
  f.generation = read_variants<GenerationCurve>(
      root, "generation_attention", k_generation_variants, [](const Cfg& c) {
        return GenerationCurve{c.get_real("bandwidth_efficiency", k_efficiency),
                               plausible_real(c, "sequence_half_bytes", units::k_half_point),
                               plausible_real(c, "latency_ms", units::k_cost_ms),
                               plausible_real(c, "per_sequence_ms", units::k_cost_ms)};
      });
  f.moe = read_variants<MoeCurve>(root, "moe", k_matmul_dtypes, [](const Cfg& c) {
    return MoeCurve{c.get_real("compute_efficiency", k_efficiency),
                    plausible_real(c, "rows_half", units::k_half_point),
                    c.get_real("bandwidth_efficiency", k_efficiency),
                    plausible_real(c, "latency_ms", units::k_cost_ms),
                    plausible_real(c, "per_expert_ms", units::k_cost_ms)};
  });
  if (const auto ar = root.optional_child("allreduce")) {
    const Cfg c = ar->child("bfloat16");
    f.allreduce = AllReduceCurve{c.get_real("bandwidth_efficiency", k_efficiency),
                                 plausible_real(c, "half_bytes", units::k_half_point),
                                 plausible_real(c, "latency_ms", units::k_cost_ms),
                                 plausible_real(c, "per_gpu_ms", units::k_cost_ms)};
  }
  if (const auto c = root.optional_child("elementwise"))
    f.elementwise = ElementwiseCurve{c->get_real("bandwidth_efficiency", k_efficiency),
                                     plausible_real(*c, "latency_ms", units::k_cost_ms)};
  doc->check_all_read();
  return f;
}

double sat(double x, double half) { return x / (x + half); }

template <typename Curve>
const Curve& curve_for(const std::map<std::string, Curve>& curves, const std::string& key,
                       const char* op, const std::string& file) {
  const auto it = curves.find(key);
  if (it != curves.end()) return it->second;
  std::vector<std::string> have;
  for (const auto& [name, c] : curves) have.push_back(name);
  throw InputError(fmt::format("shape roofline: {} has no {} curve for {} (it has: {})", file, op,
                               quote_input(key), have.empty() ? "none" : join_names(have)));
}

class ShapeRoofline final : public OperatorSource {
 public:
  ShapeRoofline(Fit fit, HardwareSpec hw) : m_fit(std::move(fit)), m_hw(std::move(hw)) {
    m_bandwidth = m_hw.bandwidth_bytes_per_s();
    if (!(m_bandwidth > 0))
      throw InputError(
          fmt::format("shape roofline: hardware {} has no memory bandwidth", m_hw.name));
    // A chip with measured figures: its datasheet moved by its own achieved share over the
    // share the fitted (NVIDIA) chips achieve in the same suite (models/catalog.h).
    if (const std::optional<MeasuredShares>& ms = m_hw.measured) {
      m_bandwidth *=
          ms->bandwidth_gb_per_s / m_hw.memory_bandwidth_gb_per_s / ms->reference_bandwidth_share;
      m_matrix_scale = ms->matrix_tflops / m_hw.peak_tflops[static_cast<size_t>(ms->matrix_dtype)] /
                       ms->reference_matrix_share;
    }
  }

  std::string describe() const override {
    return fmt::format("{} shape-aware roofline ({})", m_hw.name, m_fit.file);
  }

  double gemm_ms(double m, double n, double k, const std::string& dtype) const override {
    const GemmCurve& c = curve_for(m_fit.gemm, dtype, "gemm", m_fit.file);
    const double w = element_bytes(dtype);
    const double nk = n * k;
    const double ec = c.compute_eff * sat(m, c.m_half) * sat(nk, c.nk_half);
    const double eb = c.bandwidth_eff * sat(nk * w, c.weight_half_bytes);
    const double flops = 2.0 * m * nk;
    const double bytes = m * k * w + nk * w + 2.0 * m * n;
    return std::max(flops / (peak(dtype) * ec), bytes / (m_bandwidth * eb)) * 1e3 + c.latency_ms;
  }

  double context_attention_ms(double batch, double isl, const AttentionHeads& h,
                              const std::string& attn_dtype,
                              const std::string& kv_dtype) const override {
    const ContextCurve& c =
        curve_for(m_fit.context, attn_dtype + "_kv_" + kv_dtype, "context_attention", m_fit.file);
    const double ec =
        c.compute_eff * sat(isl, c.isl_half) * sat(batch * h.heads * isl, c.work_half);
    const double flops = 2.0 * batch * isl * isl * h.heads * h.head_dim;  // causal: half of 4
    const double bytes =
        batch * isl * h.head_dim * (4.0 * h.heads + 2.0 * h.kv_heads * element_bytes(kv_dtype));
    return std::max(flops / (peak(attn_dtype) * ec), bytes / (m_bandwidth * c.bandwidth_eff)) *
               1e3 +
           c.latency_ms;
  }

  double generation_attention_ms(double batch, double kv_tokens, const AttentionHeads& h,
                                 const std::string& attn_dtype,
                                 const std::string& kv_dtype) const override {
    const GenerationCurve& c = curve_for(m_fit.generation, attn_dtype + "_kv_" + kv_dtype,
                                         "generation_attention", m_fit.file);
    const double bytes =
        batch * kv_tokens * 2.0 * h.kv_heads * h.head_dim * element_bytes(kv_dtype) +
        4.0 * batch * h.heads * h.head_dim;
    return (bytes + c.sequence_half_bytes * batch) / (m_bandwidth * c.bandwidth_eff) * 1e3 +
           c.latency_ms + c.per_sequence_ms * batch;
  }

  double moe_ms(double tokens, const MoeShape& s, const std::string& dtype,
                const std::string& distribution) const override {
    if (distribution != "balanced")
      throw InputError(
          fmt::format("shape roofline: MoE routing {} is not modelled (it has: "
                      "balanced)",
                      quote_input(distribution)));
    const MoeCurve& c = curve_for(m_fit.moe, dtype, "moe", m_fit.file);
    const double local = s.experts / s.moe_ep;
    const double active = local * (1.0 - std::pow(1.0 - s.top_k / s.experts, tokens));
    const double pairs = tokens * s.top_k / s.moe_ep;
    const double width = s.inter_size / s.moe_tp;
    const double flops = 2.0 * pairs * 3.0 * s.hidden_size * width;
    const double bytes =
        active * 3.0 * s.hidden_size * width * element_bytes(dtype) + pairs * s.hidden_size * 4.0;
    const double ec = c.compute_eff * sat(pairs / active, c.rows_half);
    return std::max(flops / (peak(dtype) * ec), bytes / (m_bandwidth * c.bandwidth_eff)) * 1e3 +
           c.latency_ms + c.per_expert_ms * active;
  }

  double allreduce_ms(double elements, double gpus) const override {
    if (!m_fit.allreduce)
      throw InputError(fmt::format("shape roofline: {} has no allreduce curve", m_fit.file));
    if (!(m_hw.interconnect_gb_per_s > 0))
      throw InputError(
          fmt::format("shape roofline: hardware {} has no interconnect_gb_per_s", m_hw.name));
    const AllReduceCurve& c = *m_fit.allreduce;
    const double bytes = 2.0 * elements;
    const double link = m_hw.interconnect_gb_per_s / 2.0 * 1e9;  // one direction
    return 2.0 * (gpus - 1.0) / gpus * bytes / (link * c.bandwidth_eff * sat(bytes, c.half_bytes)) *
               1e3 +
           c.latency_ms + c.per_gpu_ms * (gpus - 2.0);
  }

  double elementwise_ms(double bytes) const override {
    if (!m_fit.elementwise)
      throw InputError(fmt::format("shape roofline: {} has no elementwise curve", m_fit.file));
    return bytes / (m_bandwidth * m_fit.elementwise->bandwidth_eff) * 1e3 +
           m_fit.elementwise->latency_ms;
  }

 private:
  /// Dense FLOP/s of a table dtype on this chip.
  [[nodiscard]] double peak(const std::string& dtype) const {
    Dtype d = Dtype::Bf16;
    if (dtype == "fp8" || dtype == "fp8_block")
      d = Dtype::Fp8;
    else if (dtype != "bfloat16")
      throw InputError(fmt::format(
          "shape roofline: dtype \"{}\" has no peak ({}; it has: bfloat16, "
          "fp8, fp8_block)",
          dtype,
          dtype == "nvfp4" ? "the hardware catalogue has no fp4 figure" : "not a dtype it models"));
    if (const auto p = m_hw.peak_flops_per_s(d)) return *p * m_matrix_scale;
    throw InputError(fmt::format(
        "shape roofline: {} has no {} peak for dtype {} (its "
        "peak_tflops has: {})",
        m_hw.name, dtype_name(d), quote_input(dtype), join_names(m_hw.supported_dtypes())));
  }

  /// Bytes per element of a table dtype (curve lookups have already refused unknown ones).
  [[nodiscard]] static double element_bytes(const std::string& dtype) {
    return dtype == "bfloat16" ? 2.0 : 1.0;
  }

  Fit m_fit;
  HardwareSpec m_hw;
  double m_bandwidth = 0;
  double m_matrix_scale = 1;  ///< measured matrix share over the references' (1: none)
};

bool looks_like_path(const std::string& s) {
  const auto ends = [&](const std::string& x) {
    return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  return s.find('/') != std::string::npos || ends(".yaml") || ends(".yml");
}

}  // namespace

std::vector<std::string> shape_roofline_fit_names() {
  std::vector<std::string> out;
  for (const EmbeddedFile& f : embedded_shape_roofline_fits()) out.emplace_back(f.name);
  return out;
}

std::unique_ptr<OperatorSource> make_shape_roofline_source_from_text(const std::string& fit_text,
                                                                     const std::string& fit_file,
                                                                     const HardwareSpec& hw) {
  return std::make_unique<ShapeRoofline>(parse_fit(fit_text, fit_file), hw);
}

std::unique_ptr<OperatorSource> make_shape_roofline_source(const Cfg& operators,
                                                           const HardwareSpec& hw) {
  const std::string name = operators.get_string("fit", "fit-all");
  for (const EmbeddedFile& f : embedded_shape_roofline_fits())
    if (name == f.name)
      return make_shape_roofline_source_from_text(
          f.text, fmt::format("configs/shape-roofline/{}.yaml", f.name), hw);
  if (!looks_like_path(name)) {
    const std::vector<std::string> names = shape_roofline_fit_names();
    operators.fail("fit",
                   fmt::format("unknown fit {}{} (valid: {}; or a path to a fit YAML "
                               "file written by scripts/fit_shape_roofline.py)",
                               quote_input(name), did_you_mean(name, names), join_names(names)));
  }
  const std::string path = operators.existing_file("fit", "shape-roofline fit");
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return make_shape_roofline_source_from_text(ss.str(), path, hw);
}

}  // namespace servesim
