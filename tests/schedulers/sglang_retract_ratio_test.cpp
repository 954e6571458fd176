// SGLang's new_token_ratio after a retraction (schedulers/sglang.cpp, retract_for_decode): it is
// reset to min(1, (output tokens so far + retract_decode_steps x running requests) / their
// output lengths), and the next admission promises that share of each running request's
// remaining output. Worked by hand on a 1 ms step.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_schedulers_sglang_retract_ratio_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("sglang: after a retraction the ratio is the survivors' progress over their outputs",
          "[schedulers][sglang]") {
  // Paged KV of 60 tokens in blocks of 1; init_new_token_ratio 0.01 with a decay too slow to
  // matter (1e9 steps); retract_decode_steps 2; priority scheduling (the higher value first).
  // r0 (t=0, prompt 1, 40 out), r1 (t=0.5 ms, prompt 1, 40 out), r2 (t=31.5 ms, prompt 1, 20 out,
  // priority 1).
  //   t=0  r0's prefill (KV 1); t=1 r1 joins (41 < 59 - 0.01 x 39); t=2.. both decode, each
  //        growing to 1 + k tokens at its k-th decode: KV 2 + 2k.
  //   t=31 (k = 30) r0 cannot grow past the full 60: r1 (generated 30, as r0, same prompt, the
  //        newer) is retracted; the ratio becomes (30 + 2 x 1) / 40 = 0.8; r0 decodes (KV 31).
  //   t=32 r2 (priority 1) goes first: 1 + 20 = 21 < free 29 - 0.8 x 9 (r0's remaining) = 21.8:
  //        it joins. (A ratio of 1 would leave 29 - 9 = 20, and r2 would wait for r0 to end.)
  //   r0 decodes from t=33 to its 40th token at t=42.
  const std::string path = write_temp("retract.csv",
                                      "arrival_s,prompt_tokens,output_tokens,priority\n"
                                      "0,1,40,0\n0.0005,1,40,0\n0.0315,1,20,1\n");
  const auto r = run_requests(
      "workload: {trace: {path: " + path +
      "}}\n"
      "step_time: {kind: linear, base_ms: 1}\n"
      "scheduler: {kind: sglang, chunked_prefill_size: -1, init_new_token_ratio: 0.01, "
      "new_token_ratio_decay_steps: 1000000000, retract_decode_steps: 2, "
      "enable_priority_scheduling: true}\n"
      "kv: {policy: paged, capacity_tokens: 60, block_size: 1}\n");
  REQUIRE(r.size() == 3);
  CHECK(r[0].preemptions == 0);
  CHECK(r[1].preemptions == 1);
  CHECK(r[2].first_admitted.count_ns() == ms(32));
  CHECK(r[2].first_token.count_ns() == ms(33));
  CHECK(r[0].finish.count_ns() == ms(42));
}

}  // namespace t_schedulers_sglang_retract_ratio_test
