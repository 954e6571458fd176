// A bounded run that stops while requests wait at the router (every replica down, on_failure:
// retry; docs/failures.md) records each of them once, unfinished, never served, besides the
// requests the replicas hold (sim/failure_engine.cpp, record_waiting_unfinished). Worked by hand.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "tests/support.h"

namespace t_sim_router_wait_unfinished_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("router wait: a bounded run records the requests waiting at the router as unfinished",
          "[sim][failures]") {
  // Two replicas (round robin), 10 ms a step; six requests 20 ms apart (0 to 100 ms) of 4 prompt
  // tokens and 2 output tokens, so each takes 20 ms: 0 ends at 20 ms on replica 0, 1 at 40 ms on
  // replica 1. Both replicas go down at 45 ms for 10 s: 2 (arrived at 40 ms, mid-prefill) is
  // lost and waits at the router, as 3, 4 and 5 do when they arrive. The run stops at 200 ms of
  // simulated time, long before a replica recovers.
  const std::string rows = "0,4,2\n0.02,4,2\n0.04,4,2\n0.06,4,2\n0.08,4,2\n0.1,4,2\n";
  Scenario sc = build_scenario(doc_of(
      trace_scenario(rows, "{kind: linear, base_ms: 10}", "{kind: continuous, max_num_seqs: 8}",
                     "{policy: paged, capacity_tokens: 256, block_size: 16}") +
      "cluster: {replicas: 2, router: {kind: round_robin}, failures: {script: [{replica: 0, "
      "at_s: 0.045, down_s: 10}, {replica: 1, at_s: 0.045, down_s: 10}], on_failure: retry}}\n"));
  RunLimits limits;
  limits.max_sim_time = Time::ns(200'000'000);
  CollectingRecorder rec;
  Simulation sim(std::move(sc.components), /*check=*/true, limits);
  sim.add_recorder(rec);
  sim.run();
  const std::vector<Request> rs = rec.by_id();
  REQUIRE(rs.size() == 6);
  std::map<std::string, int> by;
  for (size_t i = 0; i < rs.size(); ++i) {
    CAPTURE(i);
    CHECK(rs[i].spec.id == i);  // each request recorded once
    if (i < 2) {
      CHECK(rs[i].state == RequestState::Released);
      CHECK(rs[i].generated_tokens == 2);
    } else {
      // Arrived, never served: queued, no token, no KV.
      CHECK(rs[i].state == RequestState::Queued);
      CHECK(rs[i].generated_tokens == 0);
      CHECK(rs[i].kv_held_tokens == 0);
      CHECK(rs[i].spec.arrival.count_ns() == static_cast<int64_t>(i) * 20'000'000);
    }
  }
}

}  // namespace t_sim_router_wait_unfinished_test
