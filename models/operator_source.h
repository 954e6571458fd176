#pragma once
// Operator-time sources for the operator step model (`step_time.kind: operator`): how long one
// call of one operator, of a given shape, takes on one accelerator. The operator model composes
// a step from these calls (docs/config.md, "kind: operator"); a source only answers for shapes.
//
// Two implementations:
//   - measured tables (AIConfigurator's operator CSVs under data/timings/aiconfigurator,
//     models/operator_tables.cpp), for the GPUs someone measured;
//   - the shape-aware roofline (a datasheet plus efficiency curves fitted once across every
//     table, models/shape_roofline.cpp), for chips with no table.
//
// CONTRACT: every method is pure (the same arguments always give the same answer) and returns
// milliseconds > 0. A source is queried while the step model is built, to precompute curves for
// one model on one GPU, and never per step: it may be slow and may allocate. A shape, dtype or
// GPU count a source cannot answer throws InputError naming what is missing and what the source
// has. Arguments are doubles so that a composition may ask for an equivalent (non-integer) size;
// every count is >= 1.
#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

/// The size axes a composition samples an operator along.
enum class OperatorAxis : uint8_t {
  GemmTokens,         ///< gemm_ms's m
  ContextBatch,       ///< context_attention_ms's batch
  ContextLength,      ///< context_attention_ms's isl
  GenerationBatch,    ///< generation_attention_ms's batch
  GenerationKv,       ///< generation_attention_ms's kv_tokens
  MoeTokens,          ///< moe_ms's tokens
  AllreduceElements,  ///< allreduce_ms's elements
};

/// Attention heads on one accelerator (after the tensor-parallel split).
struct AttentionHeads {
  double heads = 0;     ///< query heads on this accelerator
  double kv_heads = 0;  ///< key/value heads on this accelerator (== heads for MHA)
  double head_dim = 0;
};

/// One mixture-of-experts block's shape, as AIConfigurator's moe table keys it.
struct MoeShape {
  double hidden_size = 0;
  double inter_size = 0;  ///< the full, unsharded expert FFN width
  double experts = 0;     ///< all experts of the layer
  double top_k = 0;       ///< experts per token
  double moe_tp = 1;      ///< tensor parallelism inside the expert FFNs
  double moe_ep = 1;      ///< expert parallelism
};

/// Number formats by the tables' own names: GEMMs "bfloat16", "fp8", "fp8_block", "nvfp4" (and
/// the A100 table's "int8_wo", "int4_wo", "sq"); attention compute and KV "bfloat16", "fp8";
/// MoE "bfloat16", "fp8", "fp8_block", "nvfp4", "w4a16_mxfp4", ...
class OperatorSource {
 public:
  virtual ~OperatorSource() = default;
  /// One line for messages and summary.json: "h100_sxm vllm-0.19.0 tables".
  [[nodiscard]] virtual std::string describe() const = 0;

  /// y[m,n] = x[m,k] W[n,k]^T as the engine's linear layer: m tokens, n outputs, k inputs.
  [[nodiscard]] virtual double gemm_ms(double m, double n, double k,
                                       const std::string& dtype) const = 0;
  /// One prefill attention call: `batch` sequences of `isl` new tokens each, no cached prefix
  /// (projections excluded).
  [[nodiscard]] virtual double context_attention_ms(double batch, double isl,
                                                    const AttentionHeads& heads,
                                                    const std::string& attn_dtype,
                                                    const std::string& kv_dtype) const = 0;
  /// One decode attention call: `batch` sequences, each computing one token against
  /// `kv_tokens` keys (its stored context plus the new token).
  [[nodiscard]] virtual double generation_attention_ms(double batch, double kv_tokens,
                                                       const AttentionHeads& heads,
                                                       const std::string& attn_dtype,
                                                       const std::string& kv_dtype) const = 0;
  /// One MoE block (routing, expert GEMMs, finalize; no communication) on one GPU of a
  /// moe_tp x moe_ep group, `tokens` entering it on this GPU. `distribution` is "balanced" or
  /// "power_law_<alpha>".
  [[nodiscard]] virtual double moe_ms(double tokens, const MoeShape& shape,
                                      const std::string& dtype,
                                      const std::string& distribution) const = 0;
  /// One in-node all-reduce of `elements` bf16 elements per GPU across `gpus` GPUs (>= 2).
  [[nodiscard]] virtual double allreduce_ms(double elements, double gpus) const = 0;
  /// The sizes along `axis` at which the source's answer may change slope (a table's measured
  /// points, from the tables read so far: ask after one query of that operator), so that a
  /// composition sampling its curves there reproduces the source between them. Empty: any
  /// sampling will do (a smooth formula).
  [[nodiscard]] virtual std::vector<double> breakpoints(OperatorAxis /*axis*/) const { return {}; }
  /// A memory-bound elementwise pass (norms, activation, residual, rotary embedding) that moves
  /// `bytes` in all; the tables have none, so a source answers from its chip's bandwidth.
  [[nodiscard]] virtual double elementwise_ms(double bytes) const = 0;
};

}  // namespace servesim
