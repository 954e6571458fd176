// linear: a step costs
//   base_ms + per_seq_ms * sequences + per_context_token_ms * decode_context_tokens
//   + per_prefill_token_ms * prefill_tokens + per_prefill_token_sq_ms * sum(chunk^2)
// Unset coefficients are 0; the coefficients must make every step take time.
#include "models/step_time_model.h"

namespace servesim {
namespace {

class LinearModel final : public StepTimeModel {
 public:
  struct Coefficients {
    double base_ms, per_seq_ms, per_context_token_ms, per_prefill_token_ms, per_prefill_token_sq_ms;
  };
  explicit LinearModel(Coefficients c) : m_c(c) {}

  double step_ms(const StepShape& s) const override {
    return m_c.base_ms + m_c.per_seq_ms * s.sequences +
           m_c.per_context_token_ms * static_cast<double>(s.decode_context_tokens) +
           m_c.per_prefill_token_ms * static_cast<double>(s.prefill_tokens) +
           m_c.per_prefill_token_sq_ms * s.prefill_tokens_sq;
  }

 private:
  Coefficients m_c;
};

}  // namespace

std::unique_ptr<StepTimeModel> make_linear_model(const Cfg& c) {
  LinearModel::Coefficients k{
      c.get_real("base_ms", 0.0, k_non_negative),
      c.get_real("per_seq_ms", 0.0, k_non_negative),
      c.get_real("per_context_token_ms", 0.0, k_non_negative),
      c.get_real("per_prefill_token_ms", 0.0, k_non_negative),
      c.get_real("per_prefill_token_sq_ms", 0.0, k_non_negative),
  };
  // Every step has at least one sequence, so base + per_seq bounds the shortest step.
  if (k.base_ms + k.per_seq_ms <= 0.0)
    c.fail("base_ms", "base_ms + per_seq_ms must be > 0, or a step could take no time");
  return std::make_unique<LinearModel>(k);
}

}  // namespace servesim
