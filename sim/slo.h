#pragma once
// The `slo` section as the scenario reads it (sim/scenario.cpp); metrics/ checks a run against
// it (docs/metrics.md#slos-and-goodput).
#include <cstdint>
#include <optional>

namespace servesim {

/// The `slo` section: latency targets, at least one given.
struct SloTargets {
  std::optional<double> ttft_ms;  ///< > 0
  std::optional<double> tpot_ms;  ///< > 0
  std::optional<double> e2e_ms;   ///< > 0: arrival to release (vLLM's e2el goodput target)
  std::optional<double> itl_ms;   ///< > 0: each gap between consecutive output tokens
  double percentile = 99;         ///< in (0, 100]: the run-level check is "p<percentile> <= target"
  int64_t accelerators = 1;       ///< goodput is also given divided by this
};

}  // namespace servesim
