// The vllm-bench export's peaks (metrics/exports.cpp): output tokens and concurrent requests
// per one-second bucket from the first request's arrival, over runs spanning several seconds,
// with every token time worked out by hand (none near a bucket's edge).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "metrics/exports.h"
#include "tests/support.h"

namespace t_metrics_export_peaks_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// One seat, 300 ms a step (a prefill or a decode of one sequence).
nlohmann::json peaks_of(const std::string& rows) {
  TokenTimes tokens;
  RunOptions o;
  o.no_requests_csv = true;
  o.step_observers.push_back(&tokens);
  o.request_recorders.push_back(&tokens);
  const RunOutput out = run_scenario(
      build_scenario(doc_of(trace_scenario(
          rows, "{kind: linear, per_seq_ms: 300}", "{kind: continuous, max_num_seqs: 1}",
          "{policy: paged, capacity_tokens: 100, block_size: 1}"))),
      o);
  std::ostringstream text;
  write_vllm_bench_json(text, out.summary, tokens, {99});
  const nlohmann::json j = nlohmann::json::parse(text.str());
  return {{"tokens", j.at("max_output_tokens_per_s")},
          {"concurrent", j.at("max_concurrent_requests")}};
}

}  // namespace

TEST_CASE("export peaks: a request counts as concurrent in every second from arrival to its end",
          "[metrics][exports]") {
  // r0 t=0, 3 tokens: 0.3, 0.6, 0.9 (done 0.9). r1 t=0.1 waits for the seat: 1.2, 1.5, 1.8.
  // r2 t=2.5, 1 token: 2.8. r3 t=2.6 waits: 3.1.
  // Tokens per second: {3, 3, 1, 1}. Concurrent: r0 in second 0, r1 in 0 and 1, r2 in 2, r3 in
  // 2 and 3: {2, 1, 2, 1}; a request is counted in its last second too.
  const nlohmann::json p = peaks_of("0,1,3\n0.1,1,3\n2.5,1,1\n2.6,1,1\n");
  CHECK(p.at("tokens").get<double>() == 3);
  CHECK(p.at("concurrent") == 2);
}

TEST_CASE("export peaks: the buckets run to the last request's end", "[metrics][exports]") {
  // r0 t=0, 1 token: 0.3. r1 t=3.05, 6 tokens: 3.35, 3.65, 3.95, 4.25, 4.55, 4.85.
  // Seconds 0 to 5 (the last end is 4.85 s after the first arrival): {1, 0, 0, 3, 3, 0}.
  const nlohmann::json p = peaks_of("0,1,1\n3.05,1,6\n");
  CHECK(p.at("tokens").get<double>() == 3);
  CHECK(p.at("concurrent") == 1);
}

}  // namespace t_metrics_export_peaks_test
