// SGLang's default new_token_ratio (schedulers/sglang.cpp): it starts at 0.7, decays by
// (0.7 - 0.098) / 600 after every decode step, and stops at its floor 0.7 x 0.14 = 0.098. The
// step at which a waiting request passes the memory estimate pins both, worked by hand.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_schedulers_sglang_ratio_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// r0 (1 token of prompt, 1000 out) at t=0, r1 (10 tokens, 1 out) at 0.5 ms; 1 ms a step. KV
/// `reserve` in blocks of 1: r0 holds its footprint of 1001 from the start, leaving `spare`
/// tokens free. r1 joins the first prefill batch where 11 < spare - ratio x (1000 - j), j the
/// step (r0 has made j tokens, and decoded j - 1 times, so ratio = 0.7 - (j - 1) x d, or the
/// floor). That step starts at j ms.
Request late_request(int spare) {
  const auto r = run_requests(trace_scenario(
      "0,1,1000\n0.0005,10,1\n", "{kind: linear, base_ms: 1}", "{kind: sglang}",
      "{policy: reserve, block_size: 1, capacity_tokens: " + std::to_string(1001 + spare) + "}"));
  REQUIRE(r.size() == 2);
  return r[1];
}

}  // namespace

TEST_CASE("sglang: the default new_token_ratio decays by (0.7 - 0.098) / 600 per decode step",
          "[schedulers][sglang]") {
  // spare 100: r1 needs 11 < 100 - ratio x (1000 - j), ratio = 0.7 - (j - 1) x 0.00100333.
  // j = 515: ratio 0.18429, 100 - 89.38 = 10.62, no; j = 516: ratio 0.18328, 100 - 88.71 =
  // 11.29, yes.
  const Request r1 = late_request(100);
  CHECK(r1.first_admitted.count_ns() == ms(516));
  CHECK(r1.finish.count_ns() == ms(517));
}

TEST_CASE("sglang: new_token_ratio stops at its floor of 0.098", "[schedulers][sglang]") {
  // spare 30: the ratio reaches 0.098 after 600 decodes; from then on r1 needs
  // 0.098 x (1000 - j) < 19, first true at j = 807. A ratio decaying on below the floor would
  // let it in at j = 646.
  const Request r1 = late_request(30);
  CHECK(r1.first_admitted.count_ns() == ms(807));
  CHECK(r1.finish.count_ns() == ms(808));
}

TEST_CASE("sglang: a chunked request's last chunk promises its whole max_new, not the ratio",
          "[schedulers][sglang]") {
  // chunked_prefill_size 8, paged KV of 120 tokens in blocks of 1, 1 ms a step. r0 (12 prompt
  // tokens, 100 out) at t = 0; r1 (4, 10) at 0.5 ms.
  //   0 ms: r0's first chunk of 8; still chunking, nothing else joins.
  //   1 ms: r0's last chunk of 4 (12 allocated, 108 free); it promises its max_new, 100, in
  //         full: r1 needs 4 + 10 = 14 >= 108 - 100 = 8, so it waits (SGLang's NO_TOKEN).
  //   2 ms: r0 decodes and promises ratio x max_new = 0.7 x 99 = 69.3; 14 < 107 - 69.3, so r1
  //         joins.
  // Promising the last chunk at the ratio (70), or subtracting it, would admit r1 at 1 ms.
  const auto r =
      run_requests(trace_scenario("0,12,100\n0.0005,4,10\n", "{kind: linear, base_ms: 1}",
                                  "{kind: sglang, chunked_prefill_size: 8}",
                                  "{policy: paged, block_size: 1, capacity_tokens: 120}"));
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_admitted.count_ns() == 0);
  CHECK(r[1].first_admitted.count_ns() == ms(2));
}

}  // namespace t_schedulers_sglang_ratio_test
