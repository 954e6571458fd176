// Routing on load signals (sim/simulation.cpp's pick, schedulers/routers.cpp): stale snapshots
// (`cluster.router.load_refresh_ms`) and the `least_kv` router, with routing worked by hand.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_sim_load_refresh_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string two_replicas(const std::string& rows, const std::string& router) {
  return trace_scenario(rows, "{kind: linear, base_ms: 10}", "{kind: continuous, max_num_seqs: 8}",
                        "{policy: paged, block_size: 16, capacity_tokens: 4096}") +
         "cluster: {replicas: 2, router: " + router + "}\n";
}

std::vector<uint32_t> replicas_of(const std::vector<Request>& reqs) {
  std::vector<uint32_t> out;
  for (const Request& r : reqs) out.push_back(r.replica);
  return out;
}

}  // namespace

TEST_CASE("load refresh: the request routed at a refresh counts in the new snapshot",
          "[sim][cluster]") {
  // least_outstanding over 2 replicas, ties scanned from replica (call mod 2). Snapshot at most
  // 100 ms old.
  //   call 0, t=0 (first snapshot, loads 0/0): replica 0. r0 has one token: gone by t=10 ms.
  //   call 1, t=0 (same snapshot, 1/0): replica 1. r1 decodes for 500 ms.
  //   call 2, t=200 ms (refresh: live loads 0/1): replica 0; the snapshot becomes 1/1.
  //   call 3, t=200 ms (same snapshot, 1/1, scan from 1): replica 1. A snapshot that forgot
  //   call 2's request (0/1) would send r3 to replica 0 as well.
  const auto reqs = run_requests(two_replicas("0,16,1\n0,16,50\n0.2,16,5\n0.2,16,5\n",
                                              "{kind: least_outstanding, load_refresh_ms: 100}"));
  REQUIRE(reqs.size() == 4);
  CHECK(replicas_of(reqs) == std::vector<uint32_t>{0, 1, 0, 1});
}

TEST_CASE("load refresh: live loads (0) route the same trace the same way", "[sim][cluster]") {
  // Every call reads live loads: r0 queued at replica 0 makes call 1 pick 1; at t=200 ms r0 is
  // gone (0/1): r2 to 0; then r2 is queued (1/1, scan from 1): r3 to 1.
  const auto reqs = run_requests(
      two_replicas("0,16,1\n0,16,50\n0.2,16,5\n0.2,16,5\n", "{kind: least_outstanding}"));
  CHECK(replicas_of(reqs) == std::vector<uint32_t>{0, 1, 0, 1});
}

TEST_CASE("least_kv: a request goes where the smallest share of KV is in use", "[sim][cluster]") {
  // r0 (1000-token prompt, 100 tokens out) to replica 0 at t=0; r1 (10 tokens) at 1 ms to the
  // empty replica 1. At t=0.5 s replica 0 holds over 1000 KV tokens, replica 1 under 100: r2 and
  // r3 both go to replica 1, where least_outstanding would split them 0 and 1
  // (1/1 from 0, then 2/1 from 1).
  const std::string rows = "0,1000,100\n0.001,10,100\n0.5,10,5\n0.5,10,5\n";
  CHECK(replicas_of(run_requests(two_replicas(rows, "{kind: least_kv}"))) ==
        std::vector<uint32_t>{0, 1, 1, 1});
  CHECK(replicas_of(run_requests(two_replicas(rows, "{kind: least_outstanding}"))) ==
        std::vector<uint32_t>{0, 1, 0, 1});
}

}  // namespace t_sim_load_refresh_test
