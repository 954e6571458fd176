// Contracts every benchmark kind's figures keep (metrics/benchmark_scenarios.h,
// docs/metrics.md#benchmark-scenarios), looped over benchmark_kind_names(): a one-token reply
// never enters a time per output token; the samples' order does not matter; no sample gives no
// figure (never a division by zero); every value is finite; and the per-second figures are the
// hand-worked totals over the kind's span.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "metrics/benchmark_scenarios.h"
#include "tests/support.h"

namespace t_metrics_benchmark_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

BenchmarkSpec spec_of(const std::string& name) {
  BenchmarkSpec s;
  for (BenchmarkKind k : {BenchmarkKind::MlperfOffline, BenchmarkKind::MlperfServer,
                          BenchmarkKind::TrtllmBench, BenchmarkKind::VllmBench})
    if (name == benchmark_kind_name(k)) s.kind = k;
  if (s.kind == BenchmarkKind::MlperfServer) {
    s.ttft_limit_ms = 1000;
    s.tpot_limit_ms = 1000;
  }
  return s;
}

std::map<std::string, std::optional<double>> figures(const BenchmarkSummary& b) {
  std::map<std::string, std::optional<double>> out;
  for (const BenchmarkFigure& f : b.figures) out[f.key] = f.value;
  return out;
}

// Three replies, times in ms: (arrival, first token, release, prompt, output).
BenchmarkSample sample(double a, double f, double r, int64_t prompt, int64_t output) {
  return {ms(a), ms(f), ms(r), prompt, output};
}
const std::vector<BenchmarkSample> k_three{
    sample(100, 110, 130, 10, 3), sample(105, 120, 130, 20, 2), sample(140, 150, 190, 30, 5)};

}  // namespace

TEST_CASE("benchmark contract: a one-token reply never enters a time per output token",
          "[metrics][contract]") {
  for (const std::string& name : benchmark_kind_names()) {
    INFO(name);
    const BenchmarkSpec spec = spec_of(name);
    std::vector<BenchmarkSample> more = k_three;
    // Inside the others' span, so that no span moves: its first token is its end.
    more.push_back(sample(106, 125, 125, 40, 1));
    const auto a = figures(benchmark_summary(spec, k_three, 0));
    const auto b = figures(benchmark_summary(spec, more, 0));
    REQUIRE(a.size() == b.size());
    for (const auto& [key, value] : a) {
      INFO(key);
      REQUIRE(b.count(key) == 1);
      if (key.find("tpot") != std::string::npos || key.find("per_user") != std::string::npos) {
        CHECK(b.at(key) == value);
      }
      if (value) CHECK(std::isfinite(*value));
      if (b.at(key)) CHECK(std::isfinite(*b.at(key)));
    }
  }
}

TEST_CASE("benchmark contract: the samples' order does not matter, and none gives no figure",
          "[metrics][contract]") {
  for (const std::string& name : benchmark_kind_names()) {
    INFO(name);
    const BenchmarkSpec spec = spec_of(name);
    const std::vector<BenchmarkSample> reversed(k_three.rbegin(), k_three.rend());
    CHECK(figures(benchmark_summary(spec, reversed, 0)) ==
          figures(benchmark_summary(spec, k_three, 0)));
    const BenchmarkSummary none = benchmark_summary(spec, {}, 2);
    for (const BenchmarkFigure& f : none.figures) {
      INFO(f.key);
      if (f.key.find("limit") == std::string::npos) CHECK_FALSE(f.value.has_value());
    }
    if (spec.kind == BenchmarkKind::MlperfServer) {
      CHECK(none.valid == false);
      CHECK(none.validity == "no sample completed; 2 samples not completed");
    } else {
      CHECK_FALSE(none.valid.has_value());
    }
  }
}

TEST_CASE("benchmark contract: per-second figures are the totals over each kind's span",
          "[metrics][contract]") {
  // Outputs 3 + 2 + 5 = 10 tokens, prompts 60. MLPerf's span runs from simulated time 0 to the
  // last release (190 ms); trtllm-bench's and vLLM's from the first arrival (100 ms): 90 ms.
  // TPOTs: 10, 10 and 10 ms; per-user rates 2 / 20 ms, 1 / 10 ms, 4 / 40 ms: 100 a second.
  for (const std::string& name : benchmark_kind_names()) {
    INFO(name);
    const auto f = figures(benchmark_summary(spec_of(name), k_three, 0));
    if (name.rfind("mlperf", 0) == 0) {
      CHECK(*f.at("duration_s") == Approx(0.190));
      CHECK(*f.at("samples_per_s") == Approx(3 / 0.190));
      CHECK(*f.at("tokens_per_s") == Approx(10 / 0.190));
      if (name == "mlperf_server") {
        CHECK(*f.at("tpot_p99_s") == Approx(0.010));
        CHECK(*f.at("ttft_p99_s") == Approx(0.015));  // sorted[floor(2.97)] of {10, 10, 15}
      }
    } else {
      const char* span = name == "trtllm_bench" ? "total_latency_s" : "duration_s";
      CHECK(*f.at(span) == Approx(0.090));
      CHECK(*f.at("request_throughput_per_s") == Approx(3 / 0.090));
      CHECK(*f.at("output_throughput_tokens_per_s") == Approx(10 / 0.090));
      CHECK(*f.at("total_token_throughput_per_s") == Approx(70 / 0.090));
    }
    if (name == "trtllm_bench") {
      CHECK(*f.at("per_user_output_tokens_per_s_mean") == Approx(100));
      CHECK(*f.at("ttft_p50_s") == Approx(0.010));  // sorted[1] of {10, 10, 15}
      CHECK(*f.at("request_latency_p99_s") == Approx(0.050));
    }
    if (name == "vllm_bench") {
      CHECK(*f.at("mean_tpot_s") == Approx(0.010));
      CHECK(*f.at("median_e2el_s") == Approx(0.030));  // {25, 30, 50}
      CHECK(*f.at("p99_e2el_s") == Approx(0.0496));    // 30 + 0.98 x 20
    }
  }
}

TEST_CASE("benchmark contract: a percentile exactly at its MLPerf limit is valid, a hair over not",
          "[metrics][contract]") {
  BenchmarkSpec s = spec_of("mlperf_server");
  s.ttft_limit_ms = 15;  // the p99 TTFT, exactly
  s.tpot_limit_ms = 10;  // the p99 TPOT, exactly
  CHECK(benchmark_summary(s, k_three, 0).valid == true);
  s.ttft_limit_ms = 14.999;
  BenchmarkSummary b = benchmark_summary(s, k_three, 0);
  CHECK(b.valid == false);
  CHECK(b.validity.find("TTFT p99") != std::string::npos);
  CHECK(b.validity.find("TPOT") == std::string::npos);
  s.ttft_limit_ms = 15;
  s.tpot_limit_ms = 9.999;
  b = benchmark_summary(s, k_three, 0);
  CHECK(b.valid == false);
  CHECK(b.validity.find("TPOT p99") != std::string::npos);
  // One sample not completed invalidates a run within both limits.
  s.tpot_limit_ms = 10;
  CHECK(benchmark_summary(s, k_three, 1).valid == false);
}

}  // namespace t_metrics_benchmark_contract_test
