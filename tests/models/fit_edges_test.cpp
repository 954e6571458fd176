// The fits at their smallest inputs: a prefill sample of a single token is a sample like any
// other (only decode-only samples, of 0 prefill tokens, are left out of the prefill cost).
#include <catch2/catch.hpp>
#include <cmath>

#include "models/fit.h"
#include "tests/support.h"

namespace t_models_fit_edges_test {

using namespace servesim;

namespace {

StepShape shape(int32_t seqs, int64_t ctx, int64_t prefill) {
  StepShape s;
  s.sequences = seqs;
  s.decode_sequences = prefill > 0 ? seqs - 1 : seqs;
  s.decode_context_tokens = ctx;
  s.prefill_tokens = prefill;
  s.prefill_tokens_sq = static_cast<double>(prefill) * static_cast<double>(prefill);
  return s;
}

}  // namespace

TEST_CASE("fit edges: the table form's prefill cost counts a one-token prefill", "[models][fit]") {
  // Decode-only steps of one sequence take 10 ms; a step of one prefill token takes 12 ms:
  // 2 ms a prefill token.
  const std::vector<StepSample> s{{shape(1, 50, 0), 10.0, ""}, {shape(1, 0, 1), 12.0, ""}};
  const auto m = fit_table(s);
  CHECK(m->predict_ms(shape(1, 0, 1)) == Approx(12.0).epsilon(1e-9));
  CHECK(m->predict_ms(shape(1, 0, 5)) == Approx(20.0).epsilon(1e-9));
  CHECK_THAT(m->yaml(), Catch::Contains("prefill_ms_per_token: 2\n"));
}

TEST_CASE("fit edges: when no knee improves the hinge fit, the ladder's first one is kept",
          "[models][fit]") {
  // Decode-only steps whose time grows more slowly with the batch (concave): a hinge, which can
  // only add cost above its knee, improves no fit, so every knee on the ladder fits equally well
  // and the first, 0, is reported (with no cost above it) rather than any later one.
  std::vector<StepSample> s;
  for (int b : {1, 2, 3, 4, 6, 8, 12})
    s.push_back({shape(b, 0, 0), 10.0 + 4.0 * std::sqrt(static_cast<double>(b)), ""});
  const auto m = fit_hinge(s);
  CHECK_THAT(m->yaml(), Catch::Contains("knee_tokens: 0\n"));
  CHECK_THAT(m->yaml(), Catch::Contains("per_token_above_knee_ms: 0\n"));
}

}  // namespace t_models_fit_edges_test
