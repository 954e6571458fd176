#pragma once
// The `benchmark` section: which benchmark tool's definitions a run's headline figures follow
// (MLPerf Server or Offline, trtllm-bench, vllm bench serve). The scenario reads it
// (sim/scenario.cpp); metrics/benchmark_scenarios.cpp computes the figures; docs/metrics.md
// sets the definitions side by side. The section changes no simulated event, only the summary.
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"

namespace servesim {

enum class BenchmarkKind { MlperfOffline, MlperfServer, TrtllmBench, VllmBench };

struct BenchmarkSpec {
  BenchmarkKind kind = BenchmarkKind::VllmBench;
  /// mlperf_server: the latency limits the run's percentile must meet for the run to be valid.
  std::optional<double> ttft_limit_ms;
  std::optional<double> tpot_limit_ms;
  /// mlperf_server: the percentile the limits apply to, in (0, 100) (MLPerf: 99).
  double percentile = 99;
};

/// Reads the optional `benchmark` section. Throws InputError at the key for an unknown kind, a
/// limit given to a kind without limits, or a missing limit.
[[nodiscard]] std::optional<BenchmarkSpec> read_benchmark(const Cfg& root);
[[nodiscard]] std::vector<std::string> benchmark_kind_names();
/// "mlperf_server" and so on: the name the config and summary.json use.
[[nodiscard]] const char* benchmark_kind_name(BenchmarkKind kind);

}  // namespace servesim
