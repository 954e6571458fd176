// Boundaries inside the step models that no figure elsewhere reaches: where the operator model's
// attention tables hand over to the grids they tabulate, and the linear fit's rule that a step
// takes time.
#include <catch2/catch.hpp>

#include "core/config.h"
#include "models/fit.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_step_boundaries_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_dir = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";

// The operator model on tests/data/aic-tiny's tiny-dense model (tests/models/operator_test.cpp
// works its figures out): context attention 0.256 ms a layer at isl 256, slope 2 beyond.
std::unique_ptr<StepTimeModel> tiny_operator() {
  auto doc = doc_of("kind: operator\nmodel: " + k_dir +
                    "/tiny-dense.yaml\nhardware: h100-sxm\noperators: {source: tables, path: " +
                    k_dir + ", gpu: tiny_gpu, engine: vllm}\n");
  auto m = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return m;
}

// A 16-token chunk after `earlier` stored tokens: the pairs of a fresh prefill of
// L = sqrt(16^2 + 2 x 16 x earlier) tokens.
StepShape chunk_after(int64_t earlier) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = 16;
  s.prefill_tokens_sq = 256;
  s.prefill_context_tokens = earlier;
  return s;
}

StepShape decode_only(int32_t seqs) {
  StepShape s;
  s.sequences = s.decode_sequences = seqs;
  return s;
}

}  // namespace

TEST_CASE("step boundaries: attention lengths below 2^20 come from the table, beyond from the grid",
          "[models][operator]") {
  const auto m = tiny_operator();
  // At T = 16 and one sequence the rest of the step is 0.204 + 0.04 ms (operator_test.cpp).
  // L = 2^19 x 33/32 = 540672 (earlier = (L^2 - 256) / 32): halfway through the table's sub-bin
  // [2^19, 2^19 x 17/16], where it interpolates linearly between 2 x 0.256 x (L / 256)^2 at
  // both ends: (1 + (17/16)^2) / 2 = 545/512 = 1090/1024 of the start, against the grid's
  // log-log (33/32)^2 = 1089/1024. The grid at 540672 is 0.512 x 2112^2 = 2283798.528 ms.
  const double below = 0.512 * 2112.0 * 2112.0;
  CHECK(m->step_ms(chunk_after(int64_t{1089} * (int64_t{1} << 23) - 8)) ==
        Approx(0.244 + below * 1090 / 1089).epsilon(1e-7));
  // L = 2^20 x 33/32 = 1081344: past the table's last octave the grid answers itself, exactly
  // log-log: 0.512 x 4224^2.
  const double beyond = 0.512 * 4224.0 * 4224.0;
  CHECK(m->step_ms(chunk_after(int64_t{1089} * (int64_t{1} << 25) - 8)) ==
        Approx(0.244 + beyond).epsilon(1e-7));
}

TEST_CASE("step boundaries: a linear fit keeps a base smaller than its per-sequence cost",
          "[models][fit]") {
  // Decode-only steps at 1 + 2 x sequences ms: the fit is exact, base 1 and 2 a sequence; only a
  // fit whose base and per-sequence cost sum to <= 0 has its base raised to 1e-6.
  const std::vector<StepSample> s{
      {decode_only(1), 3.0, ""}, {decode_only(2), 5.0, ""}, {decode_only(4), 9.0, ""}};
  const auto m = fit_linear(s);
  CHECK(m->predict_ms(decode_only(1)) == Approx(3.0).epsilon(1e-9));
  CHECK(m->predict_ms(decode_only(8)) == Approx(17.0).epsilon(1e-9));
  CHECK_THAT(m->yaml(), Catch::Contains("base_ms: 1\n") && Catch::Contains("per_seq_ms: 2\n"));
}

}  // namespace t_models_step_boundaries_test
