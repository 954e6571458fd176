// linear: a step costs
//   base_ms + per_seq_ms * sequences + per_context_token_ms * decode_context_tokens
//   + per_prefill_token_ms * prefill_tokens + per_prefill_token_sq_ms * sum(chunk^2)
//   + per_mixed_context_token_ms * decode_context_tokens, in steps that also prefill
//   + per_token_above_knee_ms * max(0, tokens - knee_tokens)
// The mixed term is there because attention kernels often read decode KV more slowly when the
// same launch also prefills (vLLM's layer profiles show it). tokens = prefill_tokens +
// decode_sequences (the tokens the step computes). The last term is a hinge: the weight-bound
// matrix multiplies cost about the same until the step computes knee_tokens tokens, then grow with
// every token. Unset coefficients are 0; the coefficients must make every step take time.
#include <algorithm>

#include "core/units.h"
#include "models/factories.h"

namespace servesim {
namespace {

class LinearModel final : public StepTimeModel {
 public:
  struct Coefficients {
    double base_ms, per_seq_ms, per_context_token_ms, per_prefill_token_ms, per_prefill_token_sq_ms,
        per_mixed_context_token_ms, per_token_above_knee_ms;
    int64_t knee_tokens;
  };
  explicit LinearModel(Coefficients c) : m_c(c) {}

  double step_ms(const StepShape& s) const override {
    const int64_t tokens = s.prefill_tokens + s.decode_sequences;
    return m_c.base_ms + m_c.per_seq_ms * s.sequences +
           m_c.per_context_token_ms * static_cast<double>(s.decode_context_tokens) +
           m_c.per_prefill_token_ms * static_cast<double>(s.prefill_tokens) +
           m_c.per_prefill_token_sq_ms * s.prefill_tokens_sq +
           (s.prefill_tokens > 0
                ? m_c.per_mixed_context_token_ms * static_cast<double>(s.decode_context_tokens)
                : 0.0) +
           m_c.per_token_above_knee_ms *
               static_cast<double>(std::max<int64_t>(0, tokens - m_c.knee_tokens));
  }

 private:
  Coefficients m_c;
};

}  // namespace

std::unique_ptr<StepTimeModel> make_linear_model(const Cfg& c) {
  LinearModel::Coefficients k{
      plausible_real(c, "base_ms", 0.0, units::k_cost_ms),
      plausible_real(c, "per_seq_ms", 0.0, units::k_cost_ms),
      plausible_real(c, "per_context_token_ms", 0.0, units::k_cost_ms),
      plausible_real(c, "per_prefill_token_ms", 0.0, units::k_cost_ms),
      plausible_real(c, "per_prefill_token_sq_ms", 0.0, units::k_cost_ms),
      plausible_real(c, "per_mixed_context_token_ms", 0.0, units::k_cost_ms),
      plausible_real(c, "per_token_above_knee_ms", 0.0, units::k_cost_ms),
      c.get_int("knee_tokens", 0, {0, int64_t{1} << 40}),
  };
  // Every step has at least one sequence, so base + per_seq bounds the shortest step.
  if (k.base_ms + k.per_seq_ms <= 0.0)
    c.fail("base_ms", "base_ms + per_seq_ms must be > 0, or a step could take no time");
  return std::make_unique<LinearModel>(k);
}

}  // namespace servesim
