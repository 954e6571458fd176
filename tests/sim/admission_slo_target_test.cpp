// admission.slo_reject (sim/admission.cpp) acts only where it is on AND a request has a TTFT
// target: slo_reject on with no target anywhere refuses nothing (there is nothing to miss).
#include <catch2/catch.hpp>

#include "metrics/output.h"
#include "tests/support.h"

namespace t_sim_admission_slo_target_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("admission: slo_reject without any TTFT target refuses nothing", "[sim][admission]") {
  // The same three requests that a 25 ms target splits (admission_test.cpp: r1's estimate is
  // 30 ms) all run when no slo.ttft_ms and no request target is given: each step 10 ms + 1 ms
  // a prefill token, one step prefilling all three (25 tokens: 35 ms), then one decode step.
  const std::string path =
      write_temp("trace.csv", "arrival_s,prompt_tokens,output_tokens\n0,10,2\n0,10,2\n0,5,2\n");
  const auto r = run_requests("workload: {trace: {path: " + path +
                              "}}\nstep_time: {kind: linear, base_ms: 10, per_prefill_token_ms: 1}"
                              "\nscheduler: {kind: continuous, max_num_seqs: 8}"
                              "\nkv: {policy: paged, capacity_tokens: 10000, block_size: 1}"
                              "\nadmission: {slo_reject: true}\n");
  REQUIRE(r.size() == 3);
  for (const Request& q : r) {
    CHECK(std::string(status_name(q)) == "finished");
    CHECK(q.reject_reason.empty());
    CHECK(q.first_token.count_ns() == ms(35));
  }
}

}  // namespace t_sim_admission_slo_target_test
