// The trtllm policy (TensorRT-LLM's in-flight batching): golden timelines on tiny traces, every
// time worked out by hand in the comments, and its config rules.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_schedulers_trtllm_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
/// Four blocks of 16 tokens.
const std::string k_small_kv = "{policy: paged, capacity_tokens: 64, block_size: 16}";
/// r0 (t=0) and r1 (t=1 ms), each a prompt of 16 and 20 tokens out: 16 + 19 = 35 KV tokens at
/// the peak, 3 blocks each; the two together need 6 of the 4.
const std::string k_two = "0,16,20\n0.001,16,20\n";

}  // namespace

TEST_CASE("trtllm: GUARANTEED_NO_EVICT holds a request that could later overflow",
          "[schedulers][trtllm]") {
  // t=0  r0 (3 blocks at its peak, 4 free) joins: 2 + 1 + 8 = 11 ms      -> t=11: token 1
  // t=11 r0's decode takes its 2nd block; r1 needs 3 blocks but only 4 - 2 - 1 (r0's 3rd, still
  //      to come) = 1 is not promised: it waits. r0 decodes alone, 19 steps of 3 ms -> t=68: done
  // t=68 r1 joins: 11 ms -> t=79 (token 1); 19 decodes of 3 ms               -> t=136: done
  auto r = run_requests(trace_scenario(k_two, k_linear, "{kind: trtllm}", k_small_kv));
  CHECK(r[0].finish.count_ns() == ms(68));
  CHECK(r[1].first_admitted.count_ns() == ms(68));
  CHECK(r[1].finish.count_ns() == ms(136));
  CHECK(r[0].preemptions + r[1].preemptions == 0);
}

TEST_CASE("trtllm: MAX_UTILIZATION admits on current need and pauses the newest",
          "[schedulers][trtllm]") {
  // t=0  r0 joins: 11 ms                                         -> t=11: r0 token 1
  // t=11 r0 decodes (2nd block) and r1 joins (1 block): 2 + 2 + 8 = 12 ms -> t=23
  // t=23 both decode (r1 takes its 2nd block, the last free one), 4 ms a step: at t = 23 + 4k
  //      r0 holds 17 + k tokens of context, r1 16 + k
  // t=83 (k = 15) r0 needs a 3rd block for its 33rd token: r1, the newest, is paused (by
  //      recompute) with 16 tokens made; nothing joins in that step. r0 alone: 3 ms a step
  //                                                              -> t=92: r0 token 20, done
  // (t=86, t=89: r1's recompute of 16 + 16 = 32 tokens needs 2 blocks, 1 is free)
  // t=92 r1 recomputes 32: 2 + 1 + 16 = 19 ms -> t=111 (token 17); 3 decodes -> t=120: done
  auto r = run_requests(trace_scenario(
      k_two, k_linear, "{kind: trtllm, capacity_scheduler_policy: MAX_UTILIZATION}", k_small_kv));
  CHECK(r[1].first_admitted.count_ns() == ms(11));
  CHECK(r[1].first_token.count_ns() == ms(23));
  CHECK(r[0].finish.count_ns() == ms(92));
  CHECK(r[1].preemptions == 1);
  CHECK(r[1].finish.count_ns() == ms(120));
}

TEST_CASE("trtllm: chunked context cuts chunks at whole KV blocks", "[schedulers][trtllm]") {
  // max_num_tokens 40, blocks of 16. r0 (t=0, prompt 50, 1 token), r1 (t=0, prompt 10, 2).
  // t=0  r0's 50 exceed 40: a chunk of 32 (two blocks); the 8 left are less than a block and
  //      r1's 10 do not fit them: 2 + 1 + 16 = 19 ms                  -> t=19
  // t=19 r0's last 18 and r1's 10: 2 + 2 + 14 = 18 ms                -> t=37: r0 done, r1 token 1
  // t=37 r1 decodes: 3 ms                                            -> t=40: r1 done
  const std::string trace = "0,50,1\n0,10,2\n";
  const std::string kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";
  auto r = run_requests(trace_scenario(
      trace, k_linear, "{kind: trtllm, max_num_tokens: 40, enable_chunked_context: true}", kv));
  CHECK(r[0].finish.count_ns() == ms(37));
  CHECK(r[1].first_admitted.count_ns() == ms(19));
  CHECK(r[1].finish.count_ns() == ms(40));

  // Without chunked context r0 can never run: rejected at arrival. r1: 2 + 1 + 5 = 8 ms, then a
  // decode of 3 ms -> t=11.
  r = run_requests(trace_scenario(trace, k_linear, "{kind: trtllm, max_num_tokens: 40}", kv));
  CHECK(r[0].state == RequestState::Rejected);
  CHECK_THAT(r[0].reject_reason, Catch::Contains("exceeds scheduler.max_num_tokens = 40"));
  CHECK(r[1].finish.count_ns() == ms(11));
}

TEST_CASE(
    "trtllm: without chunked context a prompt of exactly max_num_tokens waits for a whole "
    "step's budget, and one token more is rejected",
    "[schedulers][trtllm]") {
  // max_num_tokens 16. r0 (t=0, prompt 4, 3 tokens), r1 (t=1 ms, prompt 16, 1 token), r2 (t=2
  // ms, prompt 17, 1 token).
  // t=0  r0 prefills: 2 + 1 + 2 = 5 ms                                -> t=5: r0 token 1
  //      (r2's 17 tokens exceed 16 and cannot be chunked: rejected at arrival)
  // t=5  r0's decode takes 1 of the 16 tokens; r1's 16 do not fit the 15 left, and a prompt
  //      that fits max_num_tokens is not cut into chunks: r1 waits. 2 + 1 = 3 ms -> t=8
  // t=8  the same                                                     -> t=11: r0 done
  // t=11 r1 alone, all 16 tokens at once: 2 + 1 + 8 = 11 ms           -> t=22: r1 done
  const std::string kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";
  auto r = run_requests(trace_scenario("0,4,3\n0.001,16,1\n0.002,17,1\n", k_linear,
                                       "{kind: trtllm, max_num_tokens: 16}", kv));
  CHECK(r[0].finish.count_ns() == ms(11));
  CHECK(r[1].first_admitted.count_ns() == ms(11));
  CHECK(r[1].finish.count_ns() == ms(22));
  CHECK(r[1].preemptions == 0);
  CHECK(r[2].state == RequestState::Rejected);
  CHECK_THAT(r[2].reject_reason,
             Catch::Contains("its prompt of 17 tokens exceeds scheduler.max_num_tokens = 16"));
}

TEST_CASE("trtllm: bad settings are refused with the rule", "[schedulers][trtllm]") {
  const auto error = [](const std::string& sched) {
    return input_error_of(trace_scenario("0,4,2\n", k_linear, sched, k_small_kv));
  };
  CHECK_THAT(error("{kind: trtllm, capacity_scheduler_policy: STATIC_BATCH}"),
             Catch::Contains("GUARANTEED_NO_EVICT, MAX_UTILIZATION"));
  CHECK_THAT(error("{kind: trtllm, max_num_tokens: 8, enable_chunked_context: true}"),
             Catch::Contains("must be at least kv.block_size (16)"));
  CHECK(error("{kind: trtllm}") == "(no error)");
}

}  // namespace t_schedulers_trtllm_test
