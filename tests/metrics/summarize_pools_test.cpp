// summarize() (metrics/metrics.h), the summary of a finished run's requests and stats, on a
// cluster of pools: each pool's accelerators per replica taken from its pool, and the same pool
// and replica figures as the recorder that watched the run (run_scenario).
#include <catch2/catch.hpp>

#include "metrics/metrics.h"
#include "metrics/run_scenario.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "tests/support.h"

namespace t_metrics_summarize_pools_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("summarize: a cluster of pools gets the recorder's pool and replica figures",
          "[metrics][cluster]") {
  // Two pools, the second (one replica) slower: 60 requests, every replica busy.
  const std::string yaml =
      "workload: {synthetic: {requests: 60, arrival: {kind: poisson, rate_per_s: 80},\n"
      "  prompt_tokens: {kind: uniform, min: 16, max: 200},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 20}}}\n"
      "step_time: {kind: linear, base_ms: 6, per_seq_ms: 0.5}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n"
      "cluster:\n  router: {kind: round_robin}\n  pools:\n"
      "    - {name: fast, replicas: 2}\n"
      "    - name: slow\n      replicas: 1\n"
      "      step_time: {kind: linear, base_ms: 12, per_seq_ms: 1}\n"
      "seed: 5\n";
  Scenario sc = build_scenario(doc_of(yaml));
  Simulation sim(std::move(sc.components));
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  const Summary s = summarize(rec.requests, sim.stats());
  const Summary watched = run_scenario(doc_of(yaml)).summary;
  REQUIRE(s.replicas.size() == 3);
  REQUIRE(s.pools.size() == 2);
  REQUIRE(watched.pools.size() == 2);
  CHECK(s.requests == 60);
  CHECK(s.finished == watched.finished);
  for (size_t k = 0; k < 2; ++k) {
    INFO("pool " << k);
    CHECK(s.pools[k].name == watched.pools[k].name);
    CHECK(s.pools[k].replicas == watched.pools[k].replicas);
    CHECK(s.pools[k].accelerators == watched.pools[k].accelerators);
    CHECK(s.pools[k].requests == watched.pools[k].requests);
    CHECK(s.pools[k].routed == watched.pools[k].routed);
    CHECK(s.pools[k].finished == watched.pools[k].finished);
    CHECK(s.pools[k].steps == watched.pools[k].steps);
    CHECK(s.pools[k].ttft_s.p99 == watched.pools[k].ttft_s.p99);
  }
  CHECK(s.pools[0].requests == s.replicas[0].requests + s.replicas[1].requests);
  CHECK(s.pools[1].requests == s.replicas[2].requests);
  CHECK(s.pools[0].requests + s.pools[1].requests == 60);
  for (size_t i = 0; i < 3; ++i) {
    INFO("replica " << i);
    CHECK(s.replicas[i].routed == watched.replicas[i].routed);
    CHECK(s.replicas[i].finished == watched.replicas[i].finished);
    CHECK(s.replicas[i].ttft_s.p50 == watched.replicas[i].ttft_s.p50);
    CHECK(s.replicas[i].routed > 0);
  }
}

}  // namespace t_metrics_summarize_pools_test
