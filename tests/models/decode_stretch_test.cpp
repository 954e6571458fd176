// The operator model's decode stretch (models/decode_stretch.h) against its cost(), bit for bit,
// on the made-up tables of tests/data/aic-tiny (tests/models/operator_test.cpp describes them);
// the roofline's against its cost() over catalogue models, efficiencies and tensor parallelism.
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

/// Every figure of a stretch's cost against the model's own, to the bit.
void same_cost(const StepCost& got, const StepCost& want) {
  CHECK(same(got.step_ms, want.step_ms));
  CHECK(same(got.bytes, want.bytes));
  CHECK(same(got.flops, want.flops));
  CHECK(same(got.ideal_ms_bandwidth, want.ideal_ms_bandwidth));
  CHECK(same(got.ideal_ms_compute, want.ideal_ms_compute));
  CHECK(got.bandwidth_bound == want.bandwidth_bound);
  CHECK(same(got.peak_bytes_per_s, want.peak_bytes_per_s));
  CHECK(same(got.peak_flops_per_s, want.peak_flops_per_s));
}

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
        same_cost(got, *m->cost(s));
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
  CHECK_FALSE(build("kind: linear\nbase_ms: 10\n")->decode_stretch(8, st));
  CHECK_FALSE(
      build("kind: roofline\nmodel: llama-3.1-8b\nhardware: h100-sxm\n")->decode_stretch(0, st));
  CHECK(st.batch == 0);
}

TEST_CASE("decode stretch: the roofline's costs to the bit, at every length",
          "[models][roofline]") {
  // Dense, grouped-query and latent (MLA) attention; the efficiencies and overhead at their
  // defaults and off them; tensor parallel 1 (no all-reduce) and above (its term per token).
  // Batches from 1 to past the operator's tables, context sums from 0 to millions, the longest
  // at the mean and far above it: the roofline reads no table, so it refuses none.
  const std::vector<std::string> models = {
      "model: llama-2-7b\nhardware: a100-80gb\nweight_dtype: fp16\n"
      "bandwidth_efficiency: 0.8\ncompute_efficiency: 0.6\noverhead_ms: 0\n",
      "model: llama-3.1-8b\nhardware: h100-sxm\n",
      "model: llama-3.1-8b\nhardware: h100-sxm\ntensor_parallel: 2\noverhead_ms: 0.37\n",
      "model: llama-3.1-70b\nhardware: h100-sxm\ntensor_parallel: 4\n"
      "bandwidth_efficiency: 0.55\ncompute_efficiency: 0.93\noverhead_ms: 1.25\n",
      "model: llama-3.1-70b\nhardware: a100-80gb\ntensor_parallel: 8\nweight_dtype: fp16\n"
      "kv_dtype: fp8\nbandwidth_efficiency: 1\ncompute_efficiency: 0.05\n",
      "model: deepseek-v3\nhardware: h200\ntensor_parallel: 8\nweight_dtype: fp8\n"
      "overhead_ms: 2\n",
  };
  size_t checked = 0, compute_bound = 0, memory_bound = 0;
  for (const std::string& yaml : models) {
    const auto m = build("kind: roofline\n" + yaml);
    for (int32_t n : {1, 2, 3, 7, 16, 100, 255, 256, 1000, 4095, 4096, 20000}) {
      DecodeStretch st;
      REQUIRE(m->decode_stretch(n, st));
      CHECK(st.batch == n);
      CHECK(st.roofline);
      for (int64_t mean : std::vector<int64_t>{0, 1, 2, 33, 1000, 16383, 20000, 1 << 20})
        for (int64_t extra : {int64_t{0}, int64_t{1}, int64_t{700}, int64_t{1} << 22}) {
          // The sum a little off n x mean, so that it is not always a multiple of the batch.
          const int64_t total = n * mean + (mean > 0 ? mean % 7 : 0);
          const StepShape s = decodes(n, total, mean + extra);
          INFO(yaml << "batch " << n << " total " << total << " longest " << s.decode_context_max);
          StepCost got;
          REQUIRE(st.cost(s, got));
          const StepCost want = *m->cost(s);
          same_cost(got, want);
          CHECK(same(got.step_ms, m->step_ms(s)));
          ++checked;
          ++(want.bandwidth_bound ? memory_bound : compute_bound);
        }
      StepCost c;
      CHECK_FALSE(st.cost(decodes(n + 1, 64 * (n + 1), 64), c));
    }
  }
  CHECK(checked == 6 * 12 * 8 * 4);
  // Both sides of max(memory, compute), so that a swapped or reordered term shows.
  CHECK(compute_bound > 50);
  CHECK(memory_bound > 50);
}

}  // namespace t_models_decode_stretch_test
