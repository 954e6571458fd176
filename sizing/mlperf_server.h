#pragma once
// MLPerf Inference's Server scenario as capacity limits (`servesim capacity --mlperf BENCHMARK`,
// docs/sizing.md, "MLPerf Server capacity"): each LLM benchmark's p99 TTFT and TPOT limits as
// LoadGen's mlperf.conf sets them, and LoadGen's minimum run length and query count, so that a
// capacity search reports the highest rate that would pass as a VALID Server run.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

/// One benchmark's Server limits (mlperf.conf's `<benchmark>.Server.ttft_latency` and
/// `tpot_latency`, in ms, checked at LoadGen's `target_latency_percentile` 99).
struct MlperfServerRules {
  std::string_view benchmark;  ///< as mlperf.conf names it: "llama2-70b", "llama3_1-8b", ...
  double ttft_limit_ms = 0;
  double tpot_limit_ms = 0;
};

/// mlperf.conf: `*.Server.min_duration = 600000` (ms) and `*.Server.target_latency_percentile`.
inline constexpr double k_loadgen_min_duration_s = 600;
inline constexpr double k_loadgen_percentile = 99;
/// LoadGen's TestSettings default min_query_count; mlperf.conf sets no Server count for the LLMs.
inline constexpr int64_t k_loadgen_min_query_count = 100;

/// Every LLM benchmark with Server limits, sorted by name.
[[nodiscard]] std::span<const MlperfServerRules> mlperf_server_benchmarks();

/// The rules of `benchmark`. Throws InputError naming the valid benchmarks for another name.
[[nodiscard]] const MlperfServerRules& mlperf_server_rules(const std::string& benchmark);

/// The queries a Server run at `rate_per_s` issues: LoadGen schedules Poisson arrivals until the
/// schedule covers the minimum duration and holds the minimum count; servesim takes the expected
/// number, max(min_query_count, ceil(rate x min_duration_s)). `min_duration_s` is mlperf.conf's
/// 600 s unless the run set a longer one (a submitter's user.conf may: several published runs
/// used 2,400 s). REQUIRES: rate_per_s > 0.
[[nodiscard]] int64_t loadgen_query_count(double rate_per_s,
                                          double min_duration_s = k_loadgen_min_duration_s);

/// The --set overrides that make a scenario with a synthetic Poisson workload a Server run of
/// `r` at `rate_per_s`: the slo (p99 TTFT and TPOT at the limits), the benchmark section
/// (mlperf_server with the same limits, so that summary.json reports LoadGen's validity) and the
/// request count (loadgen_query_count with `min_duration_s`).
[[nodiscard]] std::vector<std::string> mlperf_server_overrides(
    const MlperfServerRules& r, double rate_per_s,
    double min_duration_s = k_loadgen_min_duration_s);

}  // namespace servesim
