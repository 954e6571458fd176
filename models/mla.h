#pragma once
// Multi-head latent attention (DeepSeek-V2/V3; docs/mla.md) for the operator step model: the
// projection GEMMs of one layer and the attention itself, one GPU of a tensor-parallel group.
//
// Per token and layer the hidden state goes through q_a (hidden -> q_lora_rank; none when
// q_lora_rank is 0), q_b (q_lora_rank -> heads x (nope + rope)), kv_a (hidden -> kv_lora_rank +
// rope: the latent and rotary key the cache stores) and, after attention, o (heads x v ->
// hidden). kv_b (kv_lora_rank -> heads x (nope + v)) expands the latent into keys and values for
// a prefill; a decode instead absorbs it into the query and output (SGLang's and vLLM's weight
// absorption): per token a batched product with the same weights and the same FLOPs, so one
// GEMM of kv_b's shape at every token stands for both.
//
// AIConfigurator's tables have no MLA attention rows, so the attention itself is timed by the
// shape-aware roofline (models/shape_roofline.h) whatever the GEMMs' source:
//   prefill: plain attention with keys of nope + rope and values of v: the roofline's context
//            attention with heads x heads of (nope + rope + v) / 2 (the same FLOPs and bytes);
//   decode:  every head's query against the latent (scores over kv_lora_rank + rope, output over
//            kv_lora_rank): max(the roofline's generation attention reading the latent once,
//            4 x heads x (kv_lora_rank + rope) x kv_tokens FLOPs a sequence at the bf16 peak).
#include <string>

#include "models/catalog.h"
#include "models/operator_source.h"

namespace servesim {

/// One GPU's share of an MLA layer.
struct MlaLayer {
  MlaSpec spec;
  double hidden = 0;
  double heads = 0;  ///< query heads on this GPU (attention_heads / tensor_parallel)
};

/// One layer's projection GEMMs at `tokens` tokens (q_a, q_b, kv_a, kv_b, o), weights in the
/// table's `gemm_dtype`. q_a and kv_a are whole on every GPU (their outputs are small); q_b,
/// kv_b and o split by heads.
[[nodiscard]] double mla_projection_ms(const OperatorSource& src, const MlaLayer& l, double tokens,
                                       const std::string& gemm_dtype);

/// Elements a token writes into the cache (latent and rotary key) and rotates (its queries' and
/// its key's rotary parts): for the operator model's elementwise passes.
[[nodiscard]] double mla_rotary_elements(const MlaLayer& l);

/// One prefill attention call of `batch` sequences of `isl` new tokens on `roof`.
[[nodiscard]] double mla_context_ms(const OperatorSource& roof, double batch, double isl,
                                    const MlaLayer& l, const std::string& attn_dtype,
                                    const std::string& kv_dtype);

/// One decode attention call: `batch` sequences against `kv_tokens` cached latents each.
/// `flops_per_ms`: the GPU's dense bf16 peak.
[[nodiscard]] double mla_generation_ms(const OperatorSource& roof, double batch, double kv_tokens,
                                       const MlaLayer& l, const std::string& kv_dtype,
                                       double flops_per_ms);

}  // namespace servesim
