#pragma once
// What one step moves and computes on one accelerator of a tensor-parallel group, from the
// model's architecture (docs/config.md, "kind: roofline"): shared by the roofline and operator
// step models so that both report the same bytes and flops for a shape.
//   bytes = active weights + (decode_context + prefill_context + new tokens) x KV bytes per token
//   flops = 2 x active_parameters x tokens + 4 x layers x heads x head_dim x pairs
//   pairs = decode_context_tokens + sum(chunk^2) / 2, all divided by tensor_parallel.
// With multi-head latent attention (docs/mla.md) the KV bytes are the latent's, which every GPU
// of the group holds whole, a decode pair costs 4 x heads x (kv_lora_rank + qk_rope_head_dim)
// (scores and output against the latent, weights absorbed) and a prefill pair 2 x heads x
// (qk_nope + qk_rope + v_head_dim) (plain attention with 192-wide keys and 128-wide values).
#include "models/catalog.h"
#include "models/step_time_model.h"

namespace servesim {

struct StepWork {
  double weight_bytes = 0;            ///< active weights / tp
  double kv_bytes_per_token = 0;      ///< / tp
  double flops_per_token = 0;         ///< 2 x active_parameters / tp
  double flops_per_pair = 0;          ///< 4 x layers x heads x head_dim / tp: a decode pair
  double flops_per_prefill_pair = 0;  ///< the same but for MLA

  [[nodiscard]] static StepWork of(const ModelSpec& m, Dtype weight, Dtype kv, double tp) {
    StepWork w;
    w.weight_bytes = m.active_weight_bytes(weight) / tp;
    w.kv_bytes_per_token = m.kv_bytes_per_token(kv) / tp;
    w.flops_per_token = 2.0 * static_cast<double>(m.active_parameters) / tp;
    w.flops_per_pair = 4.0 * static_cast<double>(m.layers * m.attention_heads * m.head_dim) / tp;
    w.flops_per_prefill_pair = w.flops_per_pair;
    if (m.is_mla()) {
      const auto lh = static_cast<double>(m.layers * m.attention_heads);
      w.kv_bytes_per_token = m.kv_bytes_per_token(kv);
      w.flops_per_pair = 4.0 * lh * static_cast<double>(m.mla.latent()) / tp;
      w.flops_per_prefill_pair =
          2.0 * lh *
          static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim) /
          tp;
    }
    return w;
  }
  /// The same work when `ranks` data-parallel attention ranks share a step's sequences: the
  /// flops and the KV traffic of one rank, the weights read in full on each.
  [[nodiscard]] StepWork shared_by_ranks(double ranks) const {
    StepWork w = *this;
    w.kv_bytes_per_token /= ranks;
    w.flops_per_token /= ranks;
    w.flops_per_pair /= ranks;
    w.flops_per_prefill_pair /= ranks;
    return w;
  }
  [[nodiscard]] double bytes(const StepShape& s) const {
    const auto tokens = static_cast<double>(s.prefill_tokens + s.decode_sequences);
    return weight_bytes + (static_cast<double>(s.decode_context_tokens) +
                           static_cast<double>(s.prefill_context_tokens) + tokens) *
                              kv_bytes_per_token;
  }
  [[nodiscard]] double flops(const StepShape& s) const {
    const auto tokens = static_cast<double>(s.prefill_tokens + s.decode_sequences);
    if (flops_per_prefill_pair != flops_per_pair)  // MLA
      return flops_per_token * tokens +
             flops_per_pair * static_cast<double>(s.decode_context_tokens) +
             flops_per_prefill_pair * (s.prefill_tokens_sq / 2);
    return flops_per_token * tokens +
           flops_per_pair *
               (static_cast<double>(s.decode_context_tokens) + s.prefill_tokens_sq / 2);
  }
};

}  // namespace servesim
