// The parallel engine (sim/parallel_engine.cpp) with a router delay that is a large part of the
// load refresh: a routing window spans load_refresh_ms of routing times (arrival + delay), so
// every request is routed on the same snapshot of the replicas' loads as in the sequential
// engine, and the run's files are the sequential engine's byte for byte.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "metrics/run_scenario.h"
#include "tests/support.h"

namespace t_sim_parallel_router_delay_test {

using namespace servesim;
using namespace servesim::test;

namespace {

struct Outputs {
  RunOutput run;
  std::string steps_csv;
};

Outputs run_with_threads(const std::string& yaml, int threads) {
  RunOptions o;
  o.threads = threads;
  std::ostringstream steps;
  o.steps_csv = &steps;
  Outputs out{run_scenario(doc_of(yaml), o), {}};
  out.steps_csv = steps.str();
  return out;
}

}  // namespace

TEST_CASE("parallel engine: a router delay near the load refresh keeps each window's snapshot",
          "[sim][cluster][parallel]") {
  // Delay 10 ms, refresh 25 ms: a window measured from arrival - delay instead of arrival +
  // delay would close 20 ms early, and later requests would see fresher loads than the
  // sequential engine gives them.
  const std::string yaml =
      "workload: {synthetic: {requests: 200, arrival: {kind: poisson, rate_per_s: 200}, "
      "prompt_tokens: {kind: uniform, min: 16, max: 400}, output_tokens: {kind: uniform, min: 1, "
      "max: 40}}}\n"
      "step_time: {kind: linear, base_ms: 8, per_seq_ms: 0.5, per_prefill_token_ms: 0.01}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 8192}\n"
      "cluster: {replicas: 4, router: {kind: least_outstanding, load_refresh_ms: 25, "
      "delay_ms: 10}}\n";
  const Outputs seq = run_with_threads(yaml, 0);
  REQUIRE(seq.run.engine_notice.empty());
  REQUIRE(seq.run.summary.finished == 200);
  for (int threads : {1, 2}) {
    INFO("threads: " << threads);
    const Outputs par = run_with_threads(yaml, threads);
    CHECK(par.run.engine_notice.empty());
    CHECK(par.run.requests_csv == seq.run.requests_csv);
    CHECK(par.run.summary_json == seq.run.summary_json);
    CHECK(par.steps_csv == seq.steps_csv);
  }
}

}  // namespace t_sim_parallel_router_delay_test
