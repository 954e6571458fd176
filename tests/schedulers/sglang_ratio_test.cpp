// SGLang's default new_token_ratio (schedulers/sglang.cpp): it starts at 0.7, decays by
// (0.7 - 0.098) / 600 after every decode step, and stops at its floor 0.7 x 0.14 = 0.098. The
// step at which a waiting request passes the memory estimate pins both, worked by hand.
#include <catch2/catch.hpp>

#include "tests/support.h"

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
