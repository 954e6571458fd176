// A workload's classes partition its requests (metrics/metrics.cpp): every count of the
// classes' figures adds up to the run's, on a run that preempts, rejects and misses SLOs.
#include <catch2/catch.hpp>
#include <string>

#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_class_sums_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("class sums: the classes' counts add up to the run's", "[metrics][classes]") {
  // 64 KV tokens in blocks of 16; four seats; 40-token requests three at a time do not fit, so
  // some are preempted; a 100-token prompt never fits.
  std::string rows = "arrival_s,prompt_tokens,output_tokens,class\n";
  for (int i = 0; i < 12; ++i)
    rows += "0.0" + std::to_string(10 + i) + ",20," + std::to_string(10 + 2 * i) + "," +
            (i % 3 == 0 ? "batch" : "chat") + "\n";
  rows += "0.030,100,4,batch\n";
  const std::string path = write_temp("classes.csv", rows);
  const RunOutput out =
      run_scenario(doc_of("workload: {trace: {path: " + path +
                          "}}\n"
                          "step_time: {kind: linear, base_ms: 2, per_seq_ms: 1}\n"
                          "scheduler: {kind: continuous, max_num_seqs: 4}\n"
                          "kv: {policy: paged, block_size: 16, capacity_tokens: 64}\n"
                          "slo: {ttft_ms: 40, tpot_ms: 3}\n"));
  const Summary& s = out.summary;
  REQUIRE(s.classes.size() == 2);
  REQUIRE(s.preemptions > 0);
  REQUIRE(s.rejected == 1);
  int64_t requests = 0, finished = 0, rejected = 0, unfinished = 0, preemptions = 0;
  int64_t ttft_count = 0, met = 0;
  for (const auto& [name, c] : s.classes) {
    INFO(name);
    requests += c.requests;
    finished += c.finished;
    rejected += c.rejected;
    unfinished += c.unfinished;
    preemptions += c.preemptions;
    ttft_count += c.ttft_s.count;
    REQUIRE(c.slo);
    met += c.slo->requests_met;
  }
  CHECK(requests == s.requests);
  CHECK(finished == s.finished);
  CHECK(rejected == s.rejected);
  CHECK(unfinished == s.unfinished);
  CHECK(preemptions == s.preemptions);
  CHECK(ttft_count == s.ttft_s.count);
  REQUIRE(s.slo);
  CHECK(met == s.slo->requests_met);
  for (const auto& [name, c] : s.classes)  // batch holds the prompt that never fits
    CHECK(c.rejected == (name == "batch" ? 1 : 0));
}

}  // namespace t_metrics_class_sums_test
