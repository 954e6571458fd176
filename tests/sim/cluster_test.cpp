// Clusters (`cluster`): several replicas behind a router (sim/cluster.cpp, schedulers/routers.cpp).
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "sim/errors.h"
#include "tests/support.h"

using namespace servesim;
using namespace servesim::test;

namespace {

// 40 requests a second apart, each one 10 ms prefill + 4 decodes of 10 ms: no queueing.
std::string scenario(const std::string& cluster) {
  return "workload: {synthetic: {requests: 40, arrival: {kind: fixed, rate_per_s: 1},\n"
         "  prompt_tokens: {kind: fixed, value: 32}, output_tokens: {kind: fixed, value: 5}}}\n"
         "step_time: {kind: linear, base_ms: 10}\n"
         "scheduler: {kind: continuous, max_num_seqs: 8}\n"
         "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n" +
         cluster;
}


}  // namespace

TEST_CASE("cluster: one replica behind a router is the single engine", "[sim][cluster]") {
  const RunOutput single = run_scenario(doc_of(scenario("")));
  const RunOutput one = run_scenario(
      doc_of(scenario("cluster: {replicas: 1, router: {kind: least_outstanding}}\n")));
  CHECK(one.requests_csv == single.requests_csv);
}

TEST_CASE("cluster: round robin sends request i to replica i mod N, each exactly once",
          "[sim][cluster]") {
  const auto reqs = run_requests(scenario("cluster: {replicas: 3, router: {kind: round_robin}}\n"));
  REQUIRE(reqs.size() == 40);
  for (const Request& r : reqs) {
    CHECK(r.replica == r.spec.id % 3);
    CHECK(r.state == RequestState::Released);
    // Idle replicas: 10 ms prefill (first token) then 4 decodes.
    CHECK(r.first_token - r.spec.arrival == Time::from_ms(10));
    CHECK(r.release - r.spec.arrival == Time::from_ms(50));
  }
}

TEST_CASE("cluster: a router delay adds exactly its time before the replica sees a request",
          "[sim][cluster]") {
  const auto reqs = run_requests(
      scenario("cluster: {replicas: 2, router: {kind: least_outstanding, delay_ms: 5}}\n"));
  for (const Request& r : reqs) {
    CHECK(r.first_admitted - r.spec.arrival == Time::from_ms(5));
    CHECK(r.first_token - r.spec.arrival == Time::from_ms(15));
  }
}

TEST_CASE("cluster: least_outstanding balances a burst, every request routed once",
          "[sim][cluster]") {
  // 40 requests at once on 4 replicas: each gets 10.
  const std::string yaml =
      "workload: {synthetic: {requests: 40, arrival: {kind: fixed, rate_per_s: 1e9},\n"
      "  prompt_tokens: {kind: fixed, value: 32}, output_tokens: {kind: fixed, value: 5}}}\n"
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n"
      "cluster: {replicas: 4, router: {kind: least_outstanding}}\n";
  const RunOutput out = run_scenario(doc_of(yaml));
  REQUIRE(out.summary.replicas.size() == 4);
  for (const ReplicaSummary& r : out.summary.replicas) {
    CHECK(r.routed == 10);
    CHECK(r.finished == 10);
  }
  CHECK(out.summary.finished == 40);
}

TEST_CASE("cluster: prefix_affinity keeps a conversation on one replica", "[sim][cluster]") {
  const auto reqs = run_requests(
      "workload: {closed_loop: {users: 8, requests: 96, think_s: 0.5, turns: 4,\n"
      "  prompt_tokens: {kind: fixed, value: 40}, output_tokens: {kind: fixed, value: 8}}}\n"
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, prefix_caching: true, capacity_tokens: 8192}\n"
      "cluster: {replicas: 3, router: {kind: prefix_affinity}}\n");
  REQUIRE(reqs.size() == 96);
  std::map<uint64_t, std::set<uint32_t>> where;
  std::set<uint32_t> used;
  for (const Request& r : reqs) {
    where[r.spec.content_stream].insert(r.replica);
    used.insert(r.replica);
  }
  for (const auto& [stream, replicas] : where) CHECK(replicas.size() == 1);
  CHECK(used.size() == 3);
  // Every turn after the first found its conversation's blocks.
  for (const Request& r : reqs)
    if (r.spec.prompt_tokens > 40) CHECK(r.cached_prompt_tokens > 0);
}

TEST_CASE("cluster: bad sections are config errors", "[sim][cluster]") {
  CHECK_THAT(input_error_of(scenario("cluster: {replicas: 0, router: {kind: random}}\n")),
             Catch::Contains("cluster.replicas = \"0\""));
  CHECK_THAT(input_error_of(scenario("cluster: {replicas: 2, router: {kind: fastest}}\n")),
             Catch::Contains("cluster.router.kind") && Catch::Contains("least_kv"));
  CHECK_THAT(input_error_of(scenario("cluster: {replicas: 2, router: {kind: random, max_imbalance: 3}}\n")),
             Catch::Contains("max_imbalance"));
  CHECK_THAT(input_error_of(scenario("cluster: {replicas: 2}\n")), Catch::Contains("router"));
}
