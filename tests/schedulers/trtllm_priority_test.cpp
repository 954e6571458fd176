// The trtllm policy's request priorities (scheduler.priorities, TensorRT-LLM's executor Request
// priority; docs/schedulers.md#trtllm-priorities): timelines on tiny traces worked out by hand.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_schedulers_trtllm_priority_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";

std::string scenario(const std::string& rows, const std::string& sched, int64_t kv_tokens) {
  const std::string path =
      write_temp("trtp.csv", "arrival_s,prompt_tokens,output_tokens,priority\n" + rows);
  return "workload: {trace: {path: " + path + "}}\nstep_time: " + k_linear +
         "\nscheduler: " + sched +
         "\nkv: {policy: paged, capacity_tokens: " + std::to_string(kv_tokens) +
         ", block_size: 16}\n";
}

}  // namespace

TEST_CASE("trtllm priority: the waiting queue goes by priority, then arrival",
          "[schedulers][trtllm]") {
  // One request at a time. r0 (t=0, prompt 10, one token): 2 + 1 + 5 = 8 ms. At t=1 ms r1
  // (priority 0), r2 (5), r3 (-3), prompts of 4 and one token: 5 ms each from t=8: 13, 18, 23.
  const std::string rows = "0,10,1,0\n0.001,4,1,0\n0.001,4,1,5\n0.001,4,1,-3\n";
  const auto run = [&](const std::string& extra) {
    return run_requests(scenario(rows, "{kind: trtllm, max_batch_size: 1" + extra + "}", 1024));
  };
  auto r = run("");  // priorities: none, arrival order
  CHECK(r[1].finish.count_ns() == ms(13));
  CHECK(r[2].finish.count_ns() == ms(18));
  CHECK(r[3].finish.count_ns() == ms(23));
  r = run(", priorities: highest_first");
  CHECK(r[2].finish.count_ns() == ms(13));
  CHECK(r[1].finish.count_ns() == ms(18));
  CHECK(r[3].finish.count_ns() == ms(23));
  r = run(", priorities: lowest_first");
  CHECK(r[3].finish.count_ns() == ms(13));
  CHECK(r[1].finish.count_ns() == ms(18));
  CHECK(r[2].finish.count_ns() == ms(23));
}

TEST_CASE("trtllm priority: MAX_UTILIZATION pauses the least important request",
          "[schedulers][trtllm]") {
  // Four blocks of 16. r0 (t=0, priority 0) and r1 (t=1 ms, priority 5), prompts of 16 and 20
  // tokens out (3 blocks each at the peak). As in trtllm_test's MAX_UTILIZATION case up to
  // t=83, when r0 needs its 3rd block: without priorities r1, the newest, is paused; with
  // highest_first r0, the less important, is paused instead (17 tokens made) and r1 decodes
  // alone, 3 ms a step, its 4 tokens left: t=86, 89, 92, 95 (done; it took the 3rd block at
  // t=86, so r0's recompute of 16 + 17 = 33 tokens, 3 blocks, waits for it).
  // t=95 r0 recomputes 33 tokens: 2 + 1 + 16.5 = 19.5 ms -> t=114.5 (token 18); two decodes of
  // 3 ms -> t=120.5: done.
  const std::string rows = "0,16,20,0\n0.001,16,20,5\n";
  auto r = run_requests(scenario(
      rows, "{kind: trtllm, capacity_scheduler_policy: MAX_UTILIZATION, priorities: highest_first}",
      64));
  CHECK(r[0].preemptions == 1);
  CHECK(r[1].preemptions == 0);
  CHECK(r[1].finish.count_ns() == ms(95));
  CHECK(r[0].finish.count_ns() == ms(120.5));
  r = run_requests(
      scenario(rows, "{kind: trtllm, capacity_scheduler_policy: MAX_UTILIZATION}", 64));
  CHECK(r[1].preemptions == 1);
  CHECK(r[0].finish.count_ns() == ms(92));
}

TEST_CASE("trtllm priority: a bad priorities value is refused", "[schedulers][trtllm]") {
  CHECK_THAT(input_error_of(scenario("0,4,1,0\n", "{kind: trtllm, priorities: high}", 1024)),
             Catch::Contains("none, highest_first, lowest_first"));
}

}  // namespace t_schedulers_trtllm_priority_test
