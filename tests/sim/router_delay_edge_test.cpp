// cluster.router.delay_ms at its smallest: a delay of 1 ns (0.000001 ms) is a delay, routed at
// arrival + 1 ns on both engines, and 0 routes at the arrival itself.
#include <catch2/catch.hpp>
#include <string>

#include "metrics/run_scenario.h"
#include "tests/support.h"

namespace t_sim_router_delay_edge_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("router delay edge: a delay of 1 ns moves every first token by 1 ns",
          "[sim][cluster][edges]") {
  // Two replicas, 10 ms steps: each request's prefill ends 10 ms after it is routed.
  for (const char* delay : {"0", "0.000001", "0.000002"}) {
    INFO("delay_ms " << delay);
    const int64_t ns = std::string(delay) == "0" ? 0 : std::string(delay) == "0.000001" ? 1 : 2;
    const std::string yaml =
        trace_scenario("0,3,2\n0.001,3,2\n", "{kind: linear, base_ms: 10}",
                       "{kind: continuous, max_num_seqs: 4}",
                       "{policy: paged, capacity_tokens: 1000, block_size: 1}") +
        "cluster: {replicas: 2, router: {kind: round_robin, delay_ms: " + delay + "}}\n";
    const auto r = run_requests(yaml);
    REQUIRE(r.size() == 2);
    CHECK(r[0].first_token.count_ns() == ms(10) + ns);
    CHECK(r[1].first_token.count_ns() == ms(11) + ns);
    CHECK(r[0].release.count_ns() == ms(20) + ns);
  }
}

}  // namespace t_sim_router_delay_edge_test
