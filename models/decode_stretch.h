#pragma once
// A decode-only step's cost at one batch, looked up once for the batch (the operator model's
// terms, models/operator.cpp, or the roofline's, models/roofline.cpp): the engine's decode
// streaks (sim/decode_streak.cpp) run many steps at a batch that holds for a stretch, each
// reading one more token of context per sequence, and evaluate this inline instead of calling
// the model's cost() every step.
//
// CONTRACT: for a shape it accepts, cost() gives what the model that filled it
// (StepTimeModel::decode_stretch) gives from cost(shape), to the bit: the same terms from the
// same tables, combined by the same floating-point operations in the same order (the prefill
// terms it leaves out add exact zeros there). A shape it does not cover (another batch, a
// prefill, a length past the tables) it refuses, and the caller asks the model.
#include <algorithm>
#include <cstdint>

#include "models/binned_grid.h"
#include "models/step_time_model.h"

namespace servesim {

struct DecodeStretch {
  int32_t batch = 0;       ///< the decode sequences it is for; 0: none
  bool roofline = false;   ///< the roofline's form (`rf`), not the operator model's
  double batch_count = 0;  ///< the same as a double
  /// The step's time less its decode attention: overhead + the token and sequence curves.
  double base_ms = 0;
  double weight_bytes = 0, kv_bytes_per_token = 0;  ///< StepWork's
  double token_flops = 0;                           ///< flops_per_token x batch
  double flops_per_pair = 0;
  double peak_bytes_per_s = 0, peak_flops_per_s = 0;
  BinnedGrid::BatchRow generation;  ///< decode attention at the batch, over the mean length
  double length_end = 0;            ///< the mean lengths `generation` covers lie below this
  const double* one_ms = nullptr;   ///< decode attention at one sequence, by length
  uint64_t one_lengths = 0;         ///< one_ms's size
  /// The roofline's form (RooflineModel::evaluate): the step lasts max(memory, compute) plus
  /// the all-reduces, then base_ms (its overhead) is added. It leaves length_end 0, so that the
  /// operator's test of the mean length sends every shape to it (the operator's path tests
  /// nothing more), and the operator's terms (generation, one_ms) are not read.
  struct Roofline {
    double bytes_per_s = 0;  ///< peak_bytes_per_s x bandwidth_efficiency
    double flops_per_s = 0;  ///< peak_flops_per_s x compute_efficiency
    double allreduce_s = 0;  ///< allreduce_s_per_token x the batch
  } rf;

  /// REQUIRES: s is a decode-only shape (no prefill tokens, chunks or context; sequences ==
  /// decode_sequences). Fills `c` with the model's cost(s) and returns true, or returns false
  /// (`c` unspecified) where the stretch does not cover `s`.
  [[nodiscard, gnu::always_inline]] bool cost(const StepShape& s, StepCost& c) const {
    if (s.decode_sequences != batch || batch == 0) return false;
    return cost_at(s.decode_context_tokens, s.decode_context_max, c);
  }
  /// cost() of the decode-only shape of `batch` sequences reading `context_tokens` in all, the
  /// longest `context_max`. REQUIRES: batch > 0.
  [[nodiscard, gnu::always_inline]] bool cost_at(int64_t context_tokens, int64_t context_max,
                                                 StepCost& c) const {
    const auto context = static_cast<double>(context_tokens);
    // StepWork::bytes and flops, less the prefill terms (+ 0.0 there).
    c.bytes = weight_bytes + (context + batch_count) * kv_bytes_per_token;
    c.flops = token_flops + flops_per_pair * context;
    // The generation term of OperatorModel::rank_ms.
    const double mean = std::max(1.0, context / batch_count);
    if (!(mean < length_end)) return roofline && roofline_cost(c);
    double g = generation.at(mean);
    if (static_cast<double>(context_max) > mean) {
      if (!(static_cast<uint64_t>(context_max) < one_lengths)) return false;
      const double one = one_ms[static_cast<size_t>(context_max)];
      g = g < one ? one : g;  // std::max(g, one), by value
    }
    c.peak_bytes_per_s = peak_bytes_per_s;
    c.peak_flops_per_s = peak_flops_per_s;
    c.ideal_ms_bandwidth = c.bytes / peak_bytes_per_s * 1e3;
    c.ideal_ms_compute = c.flops / peak_flops_per_s * 1e3;
    c.bandwidth_bound = c.ideal_ms_bandwidth >= c.ideal_ms_compute;
    c.step_ms = base_ms + g;
    return true;
  }
  /// cost_at's rest in the roofline's form: RooflineModel::evaluate and cost, in their order.
  [[nodiscard, gnu::always_inline]] bool roofline_cost(StepCost& c) const {
    const double memory_s = c.bytes / rf.bytes_per_s;
    const double compute_s = c.flops / rf.flops_per_s;
    c.peak_bytes_per_s = peak_bytes_per_s;
    c.peak_flops_per_s = peak_flops_per_s;
    c.ideal_ms_bandwidth = c.bytes / peak_bytes_per_s * 1e3;
    c.ideal_ms_compute = c.flops / peak_flops_per_s * 1e3;
    c.bandwidth_bound = memory_s >= compute_s;
    c.step_ms = (std::max(memory_s, compute_s) + rf.allreduce_s) * 1e3 + base_ms;
    return true;
  }
};

}  // namespace servesim
