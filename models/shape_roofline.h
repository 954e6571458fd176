#pragma once
// The shape-aware roofline: an OperatorSource for a chip with no operator table. It answers from
// the chip's datasheet (a hardware catalogue entry: memory bandwidth, dense peak per dtype,
// interconnect) and from efficiency curves fitted once across every AIConfigurator table by
// scripts/fit_shape_roofline.py (configs/shape-roofline/fit-all.yaml; docs/hardware.md, "The
// shape-aware roofline"). Times in ms; sat(x, h) = x / (x + h); B = bandwidth, P = dense peak of
// the dtype, L = interconnect / 2 (one direction).
//
//   gemm        max(2mnk / (P e_c), (mk w + nk w + 2mn) / (B e_b)) + t0,   w = dtype bytes
//               e_c = compute_efficiency sat(m, m_half_rows) sat(nk, nk_half)
//               e_b = bandwidth_efficiency sat(nk w, weight_half_bytes)
//   context     max(2 b isl^2 heads d / (P e_c), b isl d (4 heads + 2 kv_heads kv_w) / (B e_b)) +
//   t0 attention   e_c = compute_efficiency sat(isl, isl_half_tokens) sat(b heads isl, work_half)
//   generation  (bytes + sequence_half_bytes b) / (B bandwidth_efficiency) + t0 + per_sequence_ms b
//   attention   bytes = b kv 2 kv_heads d kv_w + 4 b heads d  (the KV read, Q in and O out)
//   moe         max(flops / (P compute_efficiency sat(rows per active expert, rows_half)),
//                   bytes / (B bandwidth_efficiency)) + t0 + per_expert_ms active
//               active = E/ep (1 - (1 - topk/E)^tokens): expected experts hit on this GPU
//               (balanced routing); pairs = tokens topk / ep; 3 gated matrices of hidden x
//               inter/tp; flops = 6 pairs hidden inter/tp, bytes = 3 active hidden inter/tp w +
//               4 pairs hidden
//   all-reduce  2 (n-1)/n 2 elements / (L bandwidth_efficiency sat(2 elements, half_bytes))
//               + t0 + per_gpu_ms (n - 2)
//   elementwise bytes / (B bandwidth_efficiency) + t0
//
// Dtypes: GEMM and MoE "bfloat16" (bf16 peak, 2 bytes), "fp8" and "fp8_block" (fp8 peak, 1 byte);
// attention "<attn>_kv_<kv>" with attn, kv in {bfloat16, fp8}. "nvfp4" is refused: the hardware
// catalogue has no fp4 peak. MoE routing "balanced" only.
#include <memory>
#include <string>

#include "core/config.h"
#include "models/catalog.h"
#include "models/operator_source.h"

namespace servesim {

/// Reads the operators section's `fit` key: the name of a fit file embedded in the binary
/// ("fit-all", the default, or "fit-without-<gpu>"), or a path to one (containing '/' or ending
/// in .yaml; relative to the config's folder). The caller reads `source` itself. Throws
/// InputError for an unknown name, an unreadable or bad fit file (an unknown key included).
[[nodiscard]] std::unique_ptr<OperatorSource> make_shape_roofline_source(const Cfg& operators,
                                                                         const HardwareSpec& hw);

/// The same from a fit file's text; `fit_file` names it in messages.
[[nodiscard]] std::unique_ptr<OperatorSource> make_shape_roofline_source_from_text(
    const std::string& fit_text, const std::string& fit_file, const HardwareSpec& hw);

/// Names of the embedded fit files (configs/shape-roofline/*.yaml without .yaml), sorted.
[[nodiscard]] std::vector<std::string> shape_roofline_fit_names();

}  // namespace servesim
