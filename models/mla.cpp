#include "models/mla.h"

#include <algorithm>

namespace servesim {

double mla_projection_ms(const OperatorSource& src, const MlaLayer& l, double tokens,
                         const std::string& gemm_dtype) {
  const auto& s = l.spec;
  const auto q_lora = static_cast<double>(s.q_lora_rank);
  const auto kv_lora = static_cast<double>(s.kv_lora_rank);
  const auto nope = static_cast<double>(s.qk_nope_head_dim);
  const auto rope = static_cast<double>(s.qk_rope_head_dim);
  const auto v = static_cast<double>(s.v_head_dim);
  const double q_in = q_lora > 0 ? q_lora : l.hidden;
  double ms = src.gemm_ms(tokens, l.heads * (nope + rope), q_in, gemm_dtype) +  // q_b (or q)
              src.gemm_ms(tokens, kv_lora + rope, l.hidden, gemm_dtype) +       // kv_a
              src.gemm_ms(tokens, l.heads * (nope + v), kv_lora, gemm_dtype) +  // kv_b
              src.gemm_ms(tokens, l.hidden, l.heads * v, gemm_dtype);           // o
  if (q_lora > 0) ms += src.gemm_ms(tokens, q_lora, l.hidden, gemm_dtype);      // q_a
  return ms;
}

double mla_rotary_elements(const MlaLayer& l) {
  return (l.heads + 1) * static_cast<double>(l.spec.qk_rope_head_dim);
}

double mla_context_ms(const OperatorSource& roof, double batch, double isl, const MlaLayer& l,
                      const std::string& attn_dtype, const std::string& kv_dtype) {
  const auto& s = l.spec;
  const double d = static_cast<double>(s.qk_nope_head_dim + s.qk_rope_head_dim + s.v_head_dim) / 2;
  return roof.context_attention_ms(batch, isl, {l.heads, l.heads, d}, attn_dtype, kv_dtype);
}

double mla_generation_ms(const OperatorSource& roof, double batch, double kv_tokens,
                         const MlaLayer& l, const std::string& kv_dtype, double flops_per_ms) {
  const auto latent = static_cast<double>(l.spec.latent());
  // Half a "KV head" of the latent's width: the roofline reads K and V, the latent is read once.
  const double read =
      roof.generation_attention_ms(batch, kv_tokens, {l.heads, 0.5, latent}, "bfloat16", kv_dtype);
  const double flops = 4.0 * batch * l.heads * latent * kv_tokens;
  return std::max(read, flops / flops_per_ms);
}

}  // namespace servesim
