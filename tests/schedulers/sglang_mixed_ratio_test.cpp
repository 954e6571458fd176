// SGLang's new_token_ratio with enable_mixed_chunk (schedulers/sglang.cpp): it decays after a
// step that decoded, not after a prefill-only step (the first request's own prefill). Worked by
// hand as tests/schedulers/sglang_ratio_test.cpp does without mixed chunks.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_schedulers_sglang_mixed_ratio_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("sglang: with mixed chunks the ratio decays only after steps that decode",
          "[schedulers][sglang]") {
  // r0 (prompt 1, 1000 out) at t=0, r1 (prompt 10, 1 out) at 0.5 ms; 1 ms a step. KV `reserve`
  // in blocks of 1 holds r0's footprint of 1001 from the start and 100 more. The step at t=0 is
  // r0's prefill alone (nothing decodes); from t=1 r0 decodes in every step and r1 is weighed
  // for the same step, before that step's decay: at the step starting at j ms r0 has decoded in
  // j - 1 steps, so the ratio is 0.7 - (j - 1) x d, d = (0.7 - 0.098) / 600, and r1 needs
  // 11 < 100 - ratio x (1000 - j).
  // j = 515: ratio 0.184287, 100 - 89.38 = 10.62, no; j = 516: ratio 0.183283, 100 - 88.71 =
  // 11.29, yes. (A decay after the prefill-only step too would let r1 in at 515: 100 - 0.183283
  // x 485 = 11.11.)
  const auto r =
      run_requests(trace_scenario("0,1,1000\n0.0005,10,1\n", "{kind: linear, base_ms: 1}",
                                  "{kind: sglang, enable_mixed_chunk: true}",
                                  "{policy: reserve, block_size: 1, capacity_tokens: 1101}"));
  REQUIRE(r.size() == 2);
  CHECK(r[1].first_admitted.count_ns() == ms(516));
  CHECK(r[1].finish.count_ns() == ms(517));
}

}  // namespace t_schedulers_sglang_mixed_ratio_test
