// Per-replica preemption counts of a request that moved from a prefill replica to a decode
// replica (metrics/metrics.cpp, MetricsRecorder::record): each replica counts the preemptions,
// and the swap preemptions among them, that happened on it.
#include <catch2/catch.hpp>

#include "metrics/metrics.h"
#include "sim/simulation.h"

namespace t_metrics_replica_preemptions_test {

using namespace servesim;

TEST_CASE("replica metrics: a moved request's preemptions split between its two replicas",
          "[metrics]") {
  MetricsRecorder m;
  m.track_replicas({1, 1}, {});
  Request r;
  r.spec.id = 0;
  r.spec.arrival = Time::from_ms(0);
  r.spec.prompt_tokens = 8;
  r.spec.output_tokens = 4;
  r.generated_tokens = 4;
  r.state = RequestState::Released;
  r.first_admitted = Time::from_ms(1);
  r.first_token = Time::from_ms(10);
  r.last_token = r.finish = r.release = Time::from_ms(40);
  r.prefill_replica = 0;  // prefilled on 0, decoded on 1
  r.replica = 1;
  r.preemptions = 3;  // 1 on the prefill replica, 2 on the decode replica
  r.prefill_preemptions = 1;
  r.swap_preemptions = 2;  // of them swaps: 1 on each replica
  r.prefill_swap_preemptions = 1;
  m.record(r);
  RunStats stats;
  stats.replicas.resize(2);
  stats.end = Time::from_ms(40);
  const Summary s = m.summary(stats);
  REQUIRE(s.replicas.size() == 2);
  CHECK(s.replicas[0].preemptions == 1);
  CHECK(s.replicas[1].preemptions == 2);
  CHECK(s.replicas[0].swap_preemptions == 1);
  CHECK(s.replicas[1].swap_preemptions == 1);
}

TEST_CASE("replica metrics: without track_replicas the rows hold the engine's counts only",
          "[metrics]") {
  // A recorder that was not asked to track replicas has no per-replica tallies: each row still
  // gets the engine's figures (steps, routed, busy share), and no request figures.
  MetricsRecorder m;
  Request r;
  r.spec.id = 0;
  r.spec.prompt_tokens = 8;
  r.spec.output_tokens = 1;
  r.generated_tokens = 1;
  r.state = RequestState::Released;
  r.first_admitted = Time::from_ms(0);
  r.first_token = r.last_token = r.finish = r.release = Time::from_ms(10);
  r.replica = 1;
  m.record(r);
  RunStats stats;
  stats.replicas.resize(2);
  stats.replicas[1].routed = 1;
  stats.replicas[1].steps = 1;
  stats.replicas[1].busy_ns = 10'000'000;
  stats.end = Time::from_ms(10);
  const Summary s = m.summary(stats);
  REQUIRE(s.replicas.size() == 2);
  CHECK(s.replicas[0].requests == 0);
  CHECK(s.replicas[1].requests == 0);
  CHECK(s.replicas[1].routed == 1);
  CHECK(s.replicas[1].steps == 1);
  CHECK(s.replicas[1].busy_share == Approx(1.0));
  CHECK(s.finished == 1);
}

}  // namespace t_metrics_replica_preemptions_test
