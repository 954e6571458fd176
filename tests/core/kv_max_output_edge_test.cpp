// kv.max_output_tokens at its edge (core/kv/kv_reserve.cpp): a request asking for exactly the
// maximum is served, one token more is refused at arrival with the maximum named.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_core_kv_max_output_edge_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("kv max output: a request of exactly the maximum is served, one more refused", "[kv]") {
  const std::string kv =
      "{policy: paged, capacity_tokens: 64, block_size: 16, max_output_tokens: 30}";
  const std::string step = "{kind: linear, base_ms: 10}";
  auto r = run_requests(trace_scenario("0,10,30\n", step, "{kind: trtllm}", kv));
  REQUIRE(r.size() == 1);
  CHECK(r[0].state == RequestState::Released);
  CHECK(r[0].generated_tokens == 30);
  r = run_requests(trace_scenario("0,10,31\n", step, "{kind: trtllm}", kv));
  REQUIRE(r.size() == 1);
  CHECK(r[0].state == RequestState::Rejected);
  CHECK_THAT(r[0].reject_reason,
             Catch::Contains("its 31 output tokens exceed kv.max_output_tokens = 30"));
}

}  // namespace t_core_kv_max_output_edge_test
