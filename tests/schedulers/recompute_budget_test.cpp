// Boundaries of the continuous scheduler (schedulers/continuous.cpp) worked by hand: a
// recompute after a preemption longer than the token budget, without chunked prefill, is
// chunked so it can resume; the preemption victim is the newest of two equal requests.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_schedulers_recompute_budget_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("continuous: a recompute longer than the budget is chunked without chunked prefill",
          "[schedulers]") {
  // Every step 10 ms. KV 4 blocks of 16; budget 32 tokens, chunked_prefill off. r0 and r1 both
  // arrive at t=0 (16-token prompts, 30 tokens out): one 32-token prefill step, then decodes;
  // each takes its 2nd block at t=10. At t=170 (32 tokens of context each) r0, the older,
  // needs a 3rd block: r1, the newest, is preempted with 17 tokens made. r0 finishes at t=300
  // (30 steps). r1's recompute is 16 + 17 = 33 tokens, over the budget of 32: chunked, 32 at
  // t=300, 1 at t=310 (its 18th token at t=320), then 12 decodes -> t=440.
  const auto r =
      run_requests(trace_scenario("0,16,30\n0,16,30\n", "{kind: linear, base_ms: 10}",
                                  "{kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 32}",
                                  "{policy: paged, block_size: 16, capacity_tokens: 64}"));
  REQUIRE(r.size() == 2);
  CHECK(r[0].preemptions == 0);
  CHECK(r[1].preemptions == 1);
  CHECK(r[0].finish.count_ns() == ms(300));
  CHECK(r[1].finish.count_ns() == ms(440));
}

}  // namespace t_schedulers_recompute_budget_test
