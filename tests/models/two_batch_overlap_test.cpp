// Two-batch overlap for wide expert parallelism (models/expert_parallel.h,
// docs/expert-parallelism.md): the formula by hand, and the operator model's step with it.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "core/config.h"
#include "models/expert_parallel.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_two_batch_overlap_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_tiny = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";

std::unique_ptr<StepTimeModel> tiny_moe(const std::string& extra) {
  auto doc =
      doc_of("kind: operator\nmodel: " + k_tiny +
             "/tiny-moe.yaml\nhardware: h100-sxm\noperators: {source: tables, path: " + k_tiny +
             ", gpu: tiny_gpu, engine: vllm}\n" + extra);
  auto m = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return m;
}

StepShape decodes(int n) {
  StepShape s;
  s.sequences = s.decode_sequences = n;
  s.decode_context_tokens = 100 * n;
  s.decode_context_max = s.decode_context_min = 100;
  return s;
}

}  // namespace

TEST_CASE("two_batch_overlap: each layer takes the longer of compute and all-to-all") {
  // 2 x max(3, 1) + min(3, 1) / 10 layers.
  CHECK(two_batch_overlap_ms(3, 1, 10) == Approx(6.1));
  CHECK(two_batch_overlap_ms(1, 3, 10) == Approx(6.1));
}

TEST_CASE("two_batch_overlap: a step is two micro-batches of half a rank's share") {
  // tiny-moe (tests/data/aic-tiny: 2 layers, hidden 256, 4 experts, top 2) on 2 ranks, 4
  // decodes: each micro-batch is one decode a rank, which is what a 2-decode step is without
  // the overlap. Its all-to-alls: 2 layers x (dispatch + combine) of 1 token, each the link
  // model's 10 us + 1/2 x (1.5 GPUs x 256 x 2 bytes) / 450 GB/s.
  auto plain = tiny_moe("data_parallel: 2\n");
  auto tbo = tiny_moe("data_parallel: 2\ntwo_batch_overlap: true\n");
  const double comm = 2 * 2 * (0.01 + 0.5 * 1.5 * 256 * 2 / 450e6);
  const double compute = plain->step_ms(decodes(2)) - comm;
  REQUIRE(compute > comm);
  CHECK(tbo->step_ms(decodes(4)) == Approx(2 * compute + comm / 2).epsilon(1e-4));
  // Off, the same step is one batch with its all-to-alls in line.
  CHECK(plain->step_ms(decodes(4)) != Approx(tbo->step_ms(decodes(4))));
}

TEST_CASE("two_batch_overlap: refused without data-parallel ranks") {
  CHECK_THROWS_WITH(
      tiny_moe("two_batch_overlap: true\n"),
      Catch::Contains("two_batch_overlap") && Catch::Contains("only with data_parallel > 1"));
}

}  // namespace t_models_two_batch_overlap_test
