// Contracts every fitted form keeps (models/fit.h, `servesim calibrate`): the YAML it writes,
// loaded as a scenario's step_time, times every step as the fit itself predicts, on noisy
// measurements that no form reproduces exactly (so that every term the fit may use carries
// weight); and the fit never predicts a step of no time.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "models/fit.h"
#include "models/step_time_model.h"
#include "tests/support.h"

namespace t_models_fit_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

StepShape shape(int32_t seqs, int64_t ctx, int64_t prefill) {
  StepShape s;
  s.sequences = seqs;
  s.decode_sequences = prefill > 0 ? seqs - 1 : seqs;
  s.decode_context_tokens = ctx;
  s.decode_context_min = s.decode_context_max = s.decode_sequences ? ctx / s.decode_sequences : 0;
  s.prefill_tokens = prefill;
  s.prefill_tokens_sq = static_cast<double>(prefill) * static_cast<double>(prefill);
  return s;
}

// A curved, noisy truth: a base, a per-sequence cost, context, prefill with a square term, and a
// +-7% wobble, so that no fitted form matches it and least squares spreads weight over terms.
std::vector<StepSample> noisy() {
  std::vector<StepSample> out;
  int k = 0;
  for (int32_t seqs : {1, 2, 3, 8, 24, 64})
    for (int64_t ctx_each : {16, 300, 2000})
      for (int64_t prefill : {0, 40, 700, 3000}) {
        StepSample s;
        s.shape = shape(seqs, ctx_each * (prefill > 0 ? seqs - 1 : seqs), prefill);
        const double p = static_cast<double>(prefill);
        const double tokens = p + s.shape.decode_sequences;
        s.ms = 4 + 0.3 * seqs + 2e-4 * static_cast<double>(s.shape.decode_context_tokens) +
               0.01 * p + 2e-6 * p * p + 0.004 * std::max(0.0, tokens - 200);
        s.ms *= 1 + 0.07 * std::sin(1.7 * ++k);
        out.push_back(s);
      }
  return out;
}

}  // namespace

TEST_CASE("fit contract: each form's YAML times every step as the fit predicts",
          "[models][fit][contract]") {
  const std::vector<StepSample> samples = noisy();
  const std::vector<std::pair<const char*, std::function<std::unique_ptr<FittedModel>()>>> forms{
      {"linear", [&] { return fit_linear(samples); }},
      {"hinge", [&] { return fit_hinge(samples); }},
      {"table", [&] { return fit_table(samples); }},
  };
  for (const auto& [name, fit] : forms) {
    INFO(name);
    const auto fitted = fit();
    CHECK(fitted->kind() == name);
    const std::string yaml = fitted->yaml();
    INFO(yaml);
    const auto loaded = make_step_time_model(Cfg::root(doc_of(yaml)));
    double error = 0;
    for (const StepSample& s : samples) {
      const double want = fitted->predict_ms(s.shape);
      CHECK(want > 0);
      // The YAML keeps 9 significant digits of each coefficient (6 for table points).
      CHECK(loaded->step_ms(s.shape) == Approx(want).epsilon(1e-5));
      error += std::abs(want - s.ms) / s.ms;
    }
    // A fit, not a guess: within 25% of the measurements on average.
    CHECK(error / static_cast<double>(samples.size()) < 0.25);
  }
}

}  // namespace t_models_fit_contract_test
