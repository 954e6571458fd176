// Benchmark scenarios (the `benchmark` section, docs/metrics.md#benchmark-scenarios): each
// tool's figures on one two-request run worked by hand.
//
// The run: steps of 10 ms under continuous batching. A (prompt 10, output 3) arrives at 100 ms,
// prefills 100-110 (first token 110); B (prompt 20, output 2) arrives at 105 ms and prefills in
// the step 110-120 beside A's decode (B's first token 120); the step 120-130 ends both. So A:
// arrival 100, first token 110, end 130; B: 105, 120, 130. 5 output tokens, 30 prompt tokens.
#include "metrics/benchmark_scenarios.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support.h"

namespace t_metrics_benchmark_scenarios_test {

using namespace servesim;
using namespace servesim::test;

namespace {

nlohmann::json bench_of(const std::string& benchmark) {
  const std::string yaml = trace_scenario("0.100,10,3\n0.105,20,2\n", "{kind: linear, base_ms: 10}",
                                          "{kind: continuous, max_num_seqs: 8}",
                                          "{policy: paged, capacity_tokens: 1000}") +
                           "benchmark: " + benchmark + "\n";
  const RunOutput out = run_scenario(doc_of(yaml));
  return nlohmann::json::parse(out.summary_json)["benchmark"];
}

double fig(const nlohmann::json& b, const std::string& key) {
  return b["figures"][key]["value"].get<double>();
}

}  // namespace

TEST_CASE("benchmark: percentile rules, numpy's and LoadGen's sorted index", "[metrics]") {
  const std::vector<double> v{1, 2, 3, 4};
  CHECK(percentile_linear(v, 50) == Approx(2.5));   // position 1.5
  CHECK(percentile_linear(v, 99) == Approx(3.97));  // position 2.97
  CHECK(percentile_floor_index(v, 50) == 3);        // sorted[floor(2)]
  CHECK(percentile_floor_index(v, 99) == 4);        // sorted[floor(3.96)]
  CHECK(percentile_floor_index(v, 0) == 1);
  CHECK(percentile_floor_index({7}, 99) == 7);
}

TEST_CASE("benchmark: mlperf_offline counts from test start to the last completion", "[metrics]") {
  const nlohmann::json b = bench_of("{kind: mlperf_offline}");
  CHECK(b["kind"] == "mlperf_offline");
  CHECK(fig(b, "duration_s") == Approx(0.130));
  CHECK(fig(b, "samples_per_s") == Approx(2 / 0.130));
  CHECK(fig(b, "tokens_per_s") == Approx(5 / 0.130));
  CHECK(b["figures"]["samples_per_s"]["definition"].get<std::string>().find("test start") !=
        std::string::npos);
  CHECK_FALSE(b.contains("valid"));
}

TEST_CASE("benchmark: mlperf_server judges p99 TTFT and TPOT against the limits", "[metrics]") {
  // TTFTs 10 and 15 ms: LoadGen's p99 is sorted[floor(2 x 0.99)] = sorted[1] = 15 ms. TPOTs:
  // A (130 - 110) / 2 = 10 ms, B (130 - 120) / 1 = 10 ms.
  nlohmann::json b = bench_of("{kind: mlperf_server, ttft_limit_ms: 15, tpot_limit_ms: 10}");
  CHECK(fig(b, "ttft_p99_s") == Approx(0.015));
  CHECK(fig(b, "tpot_p99_s") == Approx(0.010));
  CHECK(fig(b, "samples_per_s") == Approx(2 / 0.130));
  CHECK(b["valid"] == true);
  b = bench_of("{kind: mlperf_server, ttft_limit_ms: 14, tpot_limit_ms: 10}");
  CHECK(b["valid"] == false);
  CHECK_THAT(b["validity"].get<std::string>(), Catch::Contains("TTFT p99"));
}

TEST_CASE("benchmark: trtllm_bench divides by the total latency", "[metrics]") {
  // Total latency 130 - 100 = 30 ms. Per user: A 2 tokens / 20 ms = 100/s, B 1 / 10 ms = 100/s.
  const nlohmann::json b = bench_of("{kind: trtllm_bench}");
  CHECK(fig(b, "total_latency_s") == Approx(0.030));
  CHECK(fig(b, "request_throughput_per_s") == Approx(2 / 0.030));
  CHECK(fig(b, "output_throughput_tokens_per_s") == Approx(5 / 0.030));
  CHECK(fig(b, "total_token_throughput_per_s") == Approx(35 / 0.030));
  CHECK(fig(b, "per_user_output_tokens_per_s_mean") == Approx(100));
  CHECK(fig(b, "ttft_p50_s") == Approx(0.015));             // sorted[floor(1)] of {10, 15} ms
  CHECK(fig(b, "request_latency_p50_s") == Approx(0.030));  // sorted[1] of {25, 30} ms
  CHECK(fig(b, "request_latency_mean_s") == Approx(0.0275));
}

TEST_CASE("benchmark: vllm_bench counts from the first request, numpy percentiles", "[metrics]") {
  const nlohmann::json b = bench_of("{kind: vllm_bench}");
  CHECK(fig(b, "duration_s") == Approx(0.030));
  CHECK(fig(b, "request_throughput_per_s") == Approx(2 / 0.030));
  CHECK(fig(b, "output_throughput_tokens_per_s") == Approx(5 / 0.030));
  CHECK(fig(b, "mean_ttft_s") == Approx(0.0125));
  CHECK(fig(b, "median_ttft_s") == Approx(0.0125));
  CHECK(fig(b, "p99_ttft_s") == Approx(0.01495));  // 10 + 0.99 x 5 ms
  CHECK(fig(b, "mean_tpot_s") == Approx(0.010));
  CHECK(fig(b, "mean_e2el_s") == Approx(0.0275));
}

TEST_CASE("benchmark: bad sections name the key", "[metrics]") {
  const auto error = [](const std::string& benchmark) {
    return input_error_of(trace_scenario("0,4,2\n", "{kind: linear, base_ms: 10}",
                                         "{kind: continuous, max_num_seqs: 8}",
                                         "{policy: paged, capacity_tokens: 1000}") +
                          "benchmark: " + benchmark + "\n");
  };
  CHECK_THAT(error("{kind: mlperf}"),
             Catch::Contains("mlperf_offline, mlperf_server, trtllm_bench, vllm_bench"));
  CHECK_THAT(error("{kind: mlperf_server, ttft_limit_ms: 2000}"), Catch::Contains("tpot_limit_ms"));
  CHECK_THAT(error("{kind: vllm_bench, ttft_limit_ms: 2000}"),
             Catch::Contains("only kind: mlperf_server"));
  // LoadGen's sorted index n x p / 100 is a sample only below 100: 100 is refused, 99.99 is not.
  CHECK_THAT(error("{kind: mlperf_server, ttft_limit_ms: 2000, tpot_limit_ms: 100, "
                   "percentile: 100}"),
             Catch::Contains("percentile") && Catch::Contains("must be < 100"));
  CHECK(error("{kind: mlperf_server, ttft_limit_ms: 2000, tpot_limit_ms: 100, "
              "percentile: 99.99}") == "(no error)");
}

}  // namespace t_metrics_benchmark_scenarios_test
