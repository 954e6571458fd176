// Clusters (`cluster`): several replicas behind a router (sim/cluster.cpp, schedulers/routers.cpp).
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "core/errors.h"
#include "tests/support.h"

namespace t_sim_cluster_test {

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
  const RunOutput one =
      run_scenario(doc_of(scenario("cluster: {replicas: 1, router: {kind: least_outstanding}}\n")));
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
  CHECK_THAT(input_error_of(
                 scenario("cluster: {replicas: 2, router: {kind: random, max_imbalance: 3}}\n")),
             Catch::Contains("max_imbalance"));
  CHECK_THAT(input_error_of(scenario("cluster: {replicas: 2}\n")), Catch::Contains("router"));
}

// Pools (cluster.pools): replicas of different engines behind one router.
TEST_CASE("cluster: pools of different engines route and report per pool", "[sim][cluster]") {
  // "fast" steps take 5 ms and replaces the scheduler; "slow" uses the scenario's 10 ms model.
  const std::string yaml = scenario(
      "cluster:\n"
      "  router: {kind: round_robin}\n"
      "  pools:\n"
      "    - {name: fast, replicas: 2, step_time: {kind: linear, base_ms: 5},\n"
      "       scheduler: {kind: continuous, max_num_seqs: 4}}\n"
      "    - {name: slow, replicas: 1}\n");
  const auto reqs = run_requests(yaml);
  REQUIRE(reqs.size() == 40);
  for (const Request& r : reqs) {
    CHECK(r.replica == r.spec.id % 3);
    // Idle replicas: a prefill then 4 decodes, of 5 ms on fast (0, 1), 10 ms on slow (2).
    const Time step = Time::from_ms(r.replica < 2 ? 5 : 10);
    CHECK(r.first_token - r.spec.arrival == step);
    CHECK(r.release - r.spec.arrival == Time::ns(5 * step.count_ns()));
  }
  const RunOutput out = run_scenario(doc_of(yaml));
  REQUIRE(out.summary.replicas.size() == 3);
  CHECK(out.summary.replicas[0].pool == "fast");
  CHECK(out.summary.replicas[2].pool == "slow");
  REQUIRE(out.summary.pools.size() == 2);
  CHECK(out.summary.pools[0].name == "fast");
  CHECK(out.summary.pools[0].role == "mixed");
  CHECK(out.summary.pools[0].routed == 27);  // ids 0, 1, 3, 4, ... below 40
  CHECK(out.summary.pools[1].routed == 13);
  CHECK(out.summary.pools[0].finished + out.summary.pools[1].finished == 40);
  CHECK(out.summary.pools[0].tpot_mean_s == Approx(0.005));
  CHECK(out.summary.pools[1].tpot_mean_s == Approx(0.010));
  CHECK_THAT(out.summary_json, Catch::Contains("\"pool\": \"fast\""));
}

TEST_CASE("cluster: slo.accelerators counts every pool's replicas", "[sim][cluster]") {
  // h100 pool: tensor_parallel 2, one replica; a100 pool: tensor_parallel 1, two: 2 + 2 = 4.
  const RunOutput out = run_scenario(
      doc_of("workload: {synthetic: {requests: 6, arrival: {kind: fixed, rate_per_s: 10},\n"
             "  prompt_tokens: {kind: fixed, value: 64}, output_tokens: {kind: fixed, value: 4}}}\n"
             "scheduler: {kind: continuous, max_num_seqs: 8}\n"
             "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n"
             "slo: {ttft_ms: 1000}\n"
             "cluster:\n  router: {kind: least_outstanding}\n  pools:\n"
             "    - {name: h100, replicas: 1, step_time: {kind: roofline, model: llama-3.1-8b,\n"
             "       hardware: h100-sxm, tensor_parallel: 2}}\n"
             "    - {name: a100, replicas: 2, step_time: {kind: roofline, model: llama-3.1-8b,\n"
             "       hardware: a100-80gb}}\n"));
  REQUIRE(out.summary.slo);
  CHECK(out.summary.slo->accelerators == 4);
  REQUIRE(out.summary.pools.size() == 2);
  CHECK(out.summary.pools[0].accelerators == 2);
  CHECK(out.summary.pools[1].accelerators == 2);
}

TEST_CASE("cluster: bad pools are config errors", "[sim][cluster]") {
  CHECK_THAT(input_error_of(scenario("cluster: {replicas: 2, router: {kind: random},\n"
                                     "  pools: [{name: a, replicas: 1}]}\n")),
             Catch::Contains("pools") && Catch::Contains("replicas"));
  CHECK_THAT(
      input_error_of(scenario("cluster: {router: {kind: random},\n"
                              "  pools: [{name: a, replicas: 1}, {name: a, replicas: 2}]}\n")),
      Catch::Contains("named twice"));
  CHECK_THAT(input_error_of(scenario("cluster: {router: {kind: random},\n"
                                     "  pools: [{name: a, replicas: 1, role: prefil}]}\n")),
             Catch::Contains("cluster.pools[0].role") && Catch::Contains("prefill"));
  // A name with a space, a bracket, or none at all is refused (names key the per-pool output).
  for (const char* name : {"\"a b\"", "\"a[0]\"", "\"\""}) {
    INFO(name);
    CHECK_THAT(input_error_of(scenario(std::string("cluster: {router: {kind: random},\n"
                                                   "  pools: [{name: ") +
                                       name + ", replicas: 1}]}\n")),
               Catch::Contains("must be a non-empty name without spaces or brackets"));
  }
  // Every pool replaces the top-level scheduler: the scenario's would be ignored.
  CHECK_THAT(input_error_of(scenario("cluster: {router: {kind: random},\n"
                                     "  pools: [{name: a, replicas: 1,\n"
                                     "           scheduler: {kind: continuous}}]}\n")),
             Catch::Contains("top-level scheduler would be ignored"));
  CHECK_THAT(
      input_error_of(scenario("cluster: {router: {kind: random}, decode_router: {kind: random},\n"
                              "  pools: [{name: a, replicas: 1}]}\n")),
      Catch::Contains("cluster.decode_router") && Catch::Contains("disaggregated"));
}

}  // namespace t_sim_cluster_test
