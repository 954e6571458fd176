// The operator model's decode stretch (models/decode_stretch.h) against its cost(), bit for bit,
// on the made-up tables of tests/data/aic-tiny (tests/models/operator_test.cpp describes them).
#include "models/decode_stretch.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_decode_stretch_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_dir = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";

std::unique_ptr<StepTimeModel> build(const std::string& yaml) {
  auto doc = doc_of(yaml);
  auto m = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return m;
}

std::unique_ptr<StepTimeModel> tiny_operator() {
  return build("kind: operator\nmodel: " + k_dir +
               "/tiny-dense.yaml\nhardware: h100-sxm\noperators: {source: tables, path: " + k_dir +
               ", gpu: tiny_gpu, engine: vllm}\n");
}

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// `n` decodes reading `total` tokens, the longest `longest`.
StepShape decodes(int32_t n, int64_t total, int64_t longest) {
  StepShape s;
  s.sequences = s.decode_sequences = n;
  s.decode_context_tokens = total;
  s.decode_context_max = longest;
  s.decode_context_min = 1;
  return s;
}

}  // namespace

TEST_CASE("decode stretch: the operator model's costs to the bit, or a refusal",
          "[models][operator]") {
  const auto m = tiny_operator();
  // Batches that are points of the attention table's batch axis (up to 16) and between its
  // points; mean lengths below 1, on and between the length axis's points, up to past the
  // table (2^20: refused); the longest at the mean, above it, and past the table at one
  // sequence (16,384: refused).
  size_t covered = 0, refused = 0;
  for (int32_t n : {1, 2, 7, 16, 17, 19, 100, 255, 1000, 4095}) {
    DecodeStretch st;
    REQUIRE(m->decode_stretch(n, st));
    CHECK(st.batch == n);
    for (int64_t mean :
         std::vector<int64_t>{0, 1, 2, 33, 1000, 16383, 20000, (1 << 20) - 1, 1 << 20})
      for (int64_t extra : {0, 1, 700, 16383, 40000}) {
        const StepShape s = decodes(n, n * mean, mean + extra);
        INFO("batch " << n << " mean " << mean << " longest " << s.decode_context_max);
        StepCost got;
        if (!st.cost(s, got)) {
          ++refused;
          CHECK((mean >= int64_t{1} << 20 || s.decode_context_max >= 16384));
          continue;
        }
        ++covered;
        const StepCost want = *m->cost(s);
        CHECK(same(got.step_ms, want.step_ms));
        CHECK(same(got.bytes, want.bytes));
        CHECK(same(got.flops, want.flops));
        CHECK(same(got.ideal_ms_bandwidth, want.ideal_ms_bandwidth));
        CHECK(same(got.ideal_ms_compute, want.ideal_ms_compute));
        CHECK(got.bandwidth_bound == want.bandwidth_bound);
        CHECK(same(got.peak_bytes_per_s, want.peak_bytes_per_s));
        CHECK(same(got.peak_flops_per_s, want.peak_flops_per_s));
      }
    // Another batch is not this stretch's.
    StepCost c;
    CHECK_FALSE(st.cost(decodes(n + 1, 64 * (n + 1), 64), c));
  }
  CHECK(covered > 150);
  CHECK(refused > 100);
}

TEST_CASE("decode stretch: none past the dense batches, nor for a model without one",
          "[models][operator]") {
  DecodeStretch st;
  CHECK_FALSE(tiny_operator()->decode_stretch(4096, st));
  CHECK_FALSE(tiny_operator()->decode_stretch(0, st));
  CHECK(st.batch == 0);  // untouched
  CHECK_FALSE(
      build("kind: roofline\nmodel: llama-3.1-8b\nhardware: h100-sxm\n")->decode_stretch(8, st));
}

}  // namespace t_models_decode_stretch_test
