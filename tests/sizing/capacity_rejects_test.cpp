// Capacity search (sizing/capacity.cpp) on a config that rejects its requests: a rate at which
// requests are rejected never meets the SLOs, however fast the ones served are.
#include <catch2/catch.hpp>

#include "sizing/capacity.h"
#include "tests/support.h"

namespace t_sizing_capacity_rejects_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("capacity: a config that rejects every request meets the SLOs at no rate",
          "[sizing][capacity]") {
  // Every 2000-token prompt needs more KV than the 1000 tokens there are: all 20 requests are
  // rejected at arrival, at every rate. The search halves from 1 down to its floor of 2^-20:
  // 1, 1/2, ..., 2^-20 is 21 probes, none meeting.
  const std::string config = R"(workload:
  synthetic:
    requests: 20
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 2000}
    output_tokens: {kind: fixed, value: 1}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 1}
kv: {policy: paged, capacity_tokens: 1000, block_size: 1}
slo: {ttft_ms: 10}
)";
  const CapacityResult r = find_capacity(config, "test.yaml", {}, CapacityOptions{});
  CHECK_FALSE(r.meeting);
  REQUIRE(r.failing);
  REQUIRE(r.probes.size() == 21);
  CHECK(r.probes.front().rate_scale == 1);
  CHECK(r.probes.back().rate_scale == 1.0 / (1 << 20));
  for (const CapacityProbe& p : r.probes) {
    CHECK_FALSE(p.meets_slo);
    CHECK(p.run.summary.rejected == 20);
  }
}

}  // namespace t_sizing_capacity_rejects_test
