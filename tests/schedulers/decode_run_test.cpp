// The continuous scheduler sums its decodes' contexts as it plans them (core/batch_state.h,
// DecodeRun) and the engine sizes the step from those sums without walking the decodes again:
// a step-time model that charges each decode's context must see them. Worked by hand.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace t_schedulers_decode_run_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("decode run: the planned decodes' context sums reach the step-time model",
          "[schedulers]") {
  // 10 ms a step plus 1 ms per token a decode reads (its context and the token it computes).
  // r0 (4-token prompt, 3 out) and r1 (8, 2) both prefill in step 1: 10 ms, ends at 10. Step 2
  // decodes both, reading 5 + 9 = 14 tokens: 24 ms, ends at 34 (r1's last token). Step 3
  // decodes r0, reading 6: 16 ms, ends at 50.
  const auto r = run_requests(
      trace_scenario("0,4,3\n0,8,2\n", "{kind: linear, base_ms: 10, per_context_token_ms: 1}",
                     "{kind: continuous, max_num_seqs: 8}",
                     "{policy: paged, block_size: 16, capacity_tokens: 256}"));
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_token.count_ns() == ms(10));
  CHECK(r[1].finish.count_ns() == ms(34));
  CHECK(r[0].finish.count_ns() == ms(50));
}

TEST_CASE("decode run: a preemption after the decodes were summed keeps the step right",
          "[schedulers]") {
  // KV for 4 blocks of 16: r0 and r1 (16-token prompts, 30 out) grow into their 3rd blocks
  // and the newest is preempted; run_requests checks every step that the scheduler's sums
  // are the plan's (an InvariantError otherwise), with a model that reads them.
  const auto r = run_requests(trace_scenario(
      "0,16,30\n0,16,30\n0,8,20\n", "{kind: linear, base_ms: 10, per_context_token_ms: 0.5}",
      "{kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 32}",
      "{policy: paged, block_size: 16, capacity_tokens: 64}"));
  REQUIRE(r.size() == 3);
  CHECK(r[0].preemptions + r[1].preemptions + r[2].preemptions > 0);
}

}  // namespace t_schedulers_decode_run_test
