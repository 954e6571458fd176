// requests.csv under request-level batching (schedulers/request_level.h, metrics/requests_csv.cpp):
// a reply finishes at its own last token (finish_s) but leaves with its batch (release_s).
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_metrics_request_level_finish_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("requests.csv: under static batching finish_s is the last token, release_s the batch end",
          "[metrics]") {
  // One batch of two at t=0, 10 ms a step: the prefill (first tokens) ends at 10 ms, r0's 2nd
  // and last token at 20 ms, r1's 5th at 50 ms; both leave when the batch ends, at 50 ms.
  const std::string yaml = trace_scenario("0,16,2\n0,16,5\n", "{kind: linear, base_ms: 10}",
                                          "{kind: static, max_batch_size: 2}",
                                          "{policy: reserve, capacity_tokens: 1024}");
  const auto r = run_requests(yaml);
  REQUIRE(r.size() == 2);
  CHECK(r[0].finish.count_ns() == ms(20));
  CHECK(r[0].release.count_ns() == ms(50));
  CHECK(r[1].finish.count_ns() == ms(50));
  CHECK(r[1].release.count_ns() == ms(50));
  const RunOutput out = run_scenario(doc_of(yaml));
  // id,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,release_s,ttft_s,...
  CHECK_THAT(out.requests_csv, Catch::Contains("\n0,0.000000000,16,2,0.010000000,0.020000000,"
                                               "0.050000000,0.010000000,"));
  CHECK_THAT(out.requests_csv, Catch::Contains("\n1,0.000000000,16,5,0.010000000,0.050000000,"
                                               "0.050000000,0.010000000,"));
}

}  // namespace t_metrics_request_level_finish_test
