// TensorRT-LLM's GUARANTEED_NO_EVICT admission at its boundary (schedulers/trtllm.cpp): a
// request joins when its whole footprint fits in the free KV minus what the running requests
// still need to reach theirs, exactly-equal included. Times worked by hand.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_schedulers_trtllm_no_evict_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
/// r0 (t=0) and r1 (t=1 ms): prompts of 16, 20 tokens out: 35 KV tokens at the peak, 3 blocks.
const std::string k_two = "0,16,20\n0.001,16,20\n";

std::vector<Request> run_with_blocks(int blocks) {
  return run_requests(trace_scenario(
      k_two, k_linear, "{kind: trtllm}",
      "{policy: paged, block_size: 16, capacity_tokens: " + std::to_string(16 * blocks) + "}"));
}

}  // namespace

TEST_CASE("trtllm no-evict: a footprint equal to free minus what the running still need joins",
          "[schedulers][trtllm]") {
  // 6 blocks. t=0 r0 prefills alone: 2 + 1 + 8 = 11 ms. t=11 r0's decode takes its 2nd block
  // and still needs a 3rd: 6 - 2 - 1 = 3 blocks = r1's footprint (48 tokens): r1 joins.
  // 2 + 2 + 8 = 12 ms -> t=23, r1's first token.
  const auto r = run_with_blocks(6);
  CHECK(r[1].first_admitted.count_ns() == ms(11));
  CHECK(r[1].first_token.count_ns() == ms(23));
  CHECK(r[0].preemptions + r[1].preemptions == 0);
}

TEST_CASE("trtllm no-evict: one block short of the promise, the request waits for the finish",
          "[schedulers][trtllm]") {
  // 5 blocks: 5 - 2 - 1 = 2 < 3. r0 decodes alone (19 steps of 3 ms) -> t=68; r1 then joins.
  const auto r = run_with_blocks(5);
  CHECK(r[0].finish.count_ns() == ms(68));
  CHECK(r[1].first_admitted.count_ns() == ms(68));
  CHECK(r[1].first_token.count_ns() == ms(79));
}

}  // namespace t_schedulers_trtllm_no_evict_test
