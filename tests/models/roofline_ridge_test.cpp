// The roofline's bound at its edge (models/roofline.h, docs/metrics.md): a step whose memory
// time equals its compute time exactly is labelled bandwidth-bound, one token either side takes
// the side it is on. The toy model and chip of tests/models/roofline_test.cpp, with a chip of
// 1,000 TFLOP/s and both efficiencies 1, so that a 1,000-token prefill chunk moves 2.004e9
// bytes in 2.004 ms and does 2.004e12 FLOPs in 2.004 ms: the same double, not just close.
#include <catch2/catch.hpp>

#include "models/step_time_model.h"
#include "tests/support.h"

namespace t_models_roofline_ridge_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_model = R"(name: toy
source: written for this test
layers: 2
hidden_size: 1000
attention_heads: 10
kv_heads: 5
intermediate_size: 4000
vocab_size: 1000
parameters: 1000000000
max_context_tokens: 100000
)";

const std::string k_chip = R"(name: ridge
source: written for this test
memory_gb: 100
memory_bandwidth_gb_per_s: 1000
peak_tflops: {bf16: 1000}
interconnect_gb_per_s: 100
memory_gib: 93
tables: none
prices: {on_demand: {usd_per_hour: 1, source: nobody, date: 2026-01}}
)";

StepShape prefill(int64_t tokens) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = tokens;
  s.prefill_tokens_sq = static_cast<double>(tokens) * static_cast<double>(tokens);
  return s;
}

}  // namespace

TEST_CASE("roofline: a step exactly at the ridge is bandwidth-bound, a token more compute-bound",
          "[models][roofline]") {
  const std::string section = "{kind: roofline, model: " + write_temp("toy.yaml", k_model) +
                              ", hardware: " + write_temp("ridge.yaml", k_chip) +
                              ", bandwidth_efficiency: 1, compute_efficiency: 1}";
  const auto m = make_step_time_model(Cfg::root(doc_of(section)));
  const auto at = m->cost(prefill(1000));
  REQUIRE(at);
  CHECK(at->bytes == 2004000000.0);
  CHECK(at->flops == 2004000000000.0);
  CHECK(at->ideal_ms_bandwidth == at->ideal_ms_compute);
  CHECK(at->bandwidth_bound);
  CHECK(m->cost(prefill(999))->bandwidth_bound);
  CHECK_FALSE(m->cost(prefill(1001))->bandwidth_bound);
}

}  // namespace t_models_roofline_ridge_test
