// The power model (metrics/energy.h, docs/metrics.md#energy): energy is the integral of each
// accelerator's power over the run, worked by hand and checked against the steps of a real run.
#include "metrics/energy.h"

#include <catch2/catch.hpp>
#include <vector>

#include "metrics/run_scenario.h"
#include "sim/step_observer.h"
#include "tests/support.h"

namespace t_metrics_energy_test {

using namespace servesim;
using namespace servesim::test;

namespace {

PowerSpec chip(double idle_w, double peak_w) {
  PowerSpec p;
  p.idle_w = idle_w;
  p.peak_w = peak_w;
  return p;
}

// One replica that ran two steps: 2 s at activity 0.5 and 1 s at activity 1 (active 2 s).
RunStats two_steps() {
  RunStats s;
  s.steps = 2;
  s.costed_steps = 2;
  s.replicas.resize(1);
  s.replicas[0].steps = 2;
  s.replicas[0].busy_ns = 3'000'000'000;
  s.replicas[0].active_s = 0.5 * 2 + 1.0 * 1;
  return s;
}

struct Steps final : StepObserver {
  void on_step(const StepRecord& s) override { steps.push_back(s); }
  std::vector<StepRecord> steps;
};

// 12 requests of 300 + 40 tokens at 3 requests/s on Llama 3.1 8B, roofline step times on an H100.
std::string scenario(int tensor_parallel) {
  return R"(workload:
  synthetic:
    requests: 12
    arrival: {kind: fixed, rate_per_s: 3}
    prompt_tokens: {kind: fixed, value: 300}
    output_tokens: {kind: fixed, value: 40}
step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16,
            tensor_parallel: )" +
         std::to_string(tensor_parallel) + R"(}
scheduler: {kind: continuous, max_num_seqs: 16, max_num_batched_tokens: 2048}
kv: {policy: paged, block_size: 16, capacity_tokens: 100000}
seed: 1
)";
}

}  // namespace

TEST_CASE("energy: two steps and an idle gap give idle x gap plus each step's power x time",
          "[metrics][energy]") {
  // 10 s run, idle 100 W, peak 500 W. Step 1: 100 + 400 x 0.5 = 300 W for 2 s = 600 J. Step 2:
  // 500 W for 1 s = 500 J. The 7 s between steps: 100 W x 7 s = 700 J. Total 1800 J.
  const std::vector<PowerSpec> power{chip(100, 500)};
  const std::vector<int64_t> one{1};
  const auto e = energy_summary(two_steps(), power, one, 10.0, 4, 900);
  REQUIRE(e);
  CHECK(e->joules == Approx(1800).epsilon(1e-12));
  CHECK(e->idle_joules == Approx(1000).epsilon(1e-12));
  CHECK(e->mean_power_w == Approx(180).epsilon(1e-12));
  CHECK(e->joules_per_request == Approx(450).epsilon(1e-12));
  CHECK(e->joules_per_output_token == Approx(2).epsilon(1e-12));
  CHECK(e->output_tokens_per_joule == Approx(0.5).epsilon(1e-12));
  CHECK(e->busy_activity == Approx(2.0 / 3.0).epsilon(1e-12));
  CHECK(e->steps_at_peak_share == 0);
  CHECK(e->accelerators == 1);
}

TEST_CASE("energy: a replica of two accelerators draws twice the power", "[metrics][energy]") {
  const std::vector<PowerSpec> power{chip(100, 500)};
  const std::vector<int64_t> one{1}, two{2};
  const auto e1 = energy_summary(two_steps(), power, one, 10.0, 4, 900);
  const auto e2 = energy_summary(two_steps(), power, two, 10.0, 4, 900);
  REQUIRE(e1);
  REQUIRE(e2);
  CHECK(e2->joules == Approx(2 * e1->joules).epsilon(1e-12));
  CHECK(e2->mean_power_w == Approx(360).epsilon(1e-12));
  CHECK(e2->output_tokens_per_joule == Approx(0.25).epsilon(1e-12));
  CHECK(e2->accelerators == 2);
}

TEST_CASE("energy: none without every replica's power or with no duration", "[metrics][energy]") {
  const std::vector<PowerSpec> none;
  const std::vector<int64_t> one{1};
  CHECK_FALSE(energy_summary(two_steps(), none, one, 10.0, 4, 900));
  const std::vector<PowerSpec> power{chip(100, 500)};
  CHECK_FALSE(energy_summary(two_steps(), power, one, 0.0, 4, 900));
}

TEST_CASE("energy: a run's joules equal the integral of power over its steps and idle time",
          "[metrics][energy]") {
  for (const int tp : {1, 2}) {
    Steps steps;
    RunOptions o;
    o.step_observers.push_back(&steps);
    const RunOutput out = run_scenario(doc_of(scenario(tp)), o);
    const Summary& s = out.summary;
    REQUIRE(s.energy);
    // The catalogue's H100 SXM: 700 W peak, 105 W idle, 3,350 GB/s, 989.4 bf16 TFLOP/s.
    const double idle = 105, peak = 700, bw = 3350e9, flops = 989.4e12;
    double joules = 0, busy_s = 0;
    for (const StepRecord& r : steps.steps) {
      const double t = r.duration.seconds();
      const double activity = std::min(1.0, std::max(r.bytes / bw, r.flops / flops) / t);
      joules += (idle + (peak - idle) * activity) * t;
      busy_s += t;
    }
    joules += idle * (s.duration_s - busy_s);
    joules *= tp;  // every accelerator of the tensor-parallel group draws the same
    CHECK(s.energy->accelerators == tp);
    CHECK(s.energy->joules == Approx(joules).epsilon(1e-9));
    CHECK(s.energy->joules_per_output_token ==
          Approx(joules / static_cast<double>(s.output_tokens)).epsilon(1e-9));
    CHECK(s.energy->steps_at_peak_share == 0);
    CHECK(out.summary_json.find("\"output_tokens_per_joule\"") != std::string::npos);
  }
}

TEST_CASE("energy: a step model without costs counts its steps at peak power",
          "[metrics][energy]") {
  const RunOutput out = run_scenario(doc_of(R"(workload:
  synthetic:
    requests: 4
    arrival: {kind: fixed, rate_per_s: 4}
    prompt_tokens: {kind: fixed, value: 20}
    output_tokens: {kind: fixed, value: 5}
step_time: {kind: linear, base_ms: 8, per_seq_ms: 2}
scheduler: {kind: continuous, max_num_seqs: 8}
kv: {policy: paged, block_size: 16,
     memory: {hardware: l4, parameters: 1000000, weight_dtype: bf16, layers: 2, kv_heads: 1,
              head_dim: 64}}
)"));
  const Summary& s = out.summary;
  REQUIRE(s.energy);
  const double busy_s = s.busy_share * s.duration_s;
  // L4: 72 W peak, 10.8 W idle.
  CHECK(s.energy->joules == Approx(10.8 * s.duration_s + (72 - 10.8) * busy_s).epsilon(1e-9));
  CHECK(s.energy->steps_at_peak_share == 1);
  CHECK(s.energy->busy_activity == Approx(1).epsilon(1e-12));
}

TEST_CASE("energy: a run on no catalogue chip reports none", "[metrics][energy]") {
  const RunOutput out = run_scenario(doc_of(R"(workload:
  synthetic:
    requests: 2
    arrival: {kind: fixed, rate_per_s: 4}
    prompt_tokens: {kind: fixed, value: 20}
    output_tokens: {kind: fixed, value: 5}
step_time: {kind: linear, base_ms: 8, per_seq_ms: 2}
scheduler: {kind: continuous, max_num_seqs: 8}
kv: {policy: paged, block_size: 16, capacity_tokens: 65536}
)"));
  CHECK_FALSE(out.summary.energy);
  CHECK(out.summary_json.find("\"energy\"") == std::string::npos);
}

}  // namespace t_metrics_energy_test
