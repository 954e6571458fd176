#pragma once
// The capacity search of `servesim capacity` (cli/capacity_cmd.h): the highest request rate at
// which a scenario still meets its SLOs (docs/sizing.md#capacity). The workload's arrival rate is
// scaled (workload.transform.rate_scale, or target_rate_per_s when the config gives that) by
// factors bracketed by doubling or halving from 1, then bisected until the bracket is within the
// relative tolerance. Deterministic: the probes depend only on the config, its seed and the
// tolerance. Assumes that a workload meeting its SLOs at a rate meets them at every lower rate.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sizing/mlperf_server.h"
#include "sizing/sweep_run.h"

namespace servesim {

struct CapacityOptions {
  double tolerance = 0.01;  ///< stop when (failing - meeting scale) <= tolerance x meeting scale
  std::optional<double> min_attainment;  ///< also require this share of requests meeting the SLOs
  double max_scale = 1 << 20;            ///< give up doubling here (the SLOs hold at every rate)
  double min_scale = 1.0 / (1 << 20);    ///< give up halving here (no rate meets the SLOs)
  RunLimits limits;  ///< every probe's; one stopped by limits.interrupt throws Interrupted
  /// An MLPerf Server search (--mlperf): each probe gets the benchmark's p99 limits as its slo
  /// and LoadGen's query count for its rate (mlperf_server_overrides). REQUIRES of the config: a
  /// synthetic workload with Poisson arrivals at a rate_per_s.
  std::optional<MlperfServerRules> mlperf;
  /// --min-duration: the MLPerf run's minimum duration in s (LoadGen's min_duration; mlperf.conf's
  /// 600 unless the run set a longer one), which sets each probe's query count.
  double mlperf_min_duration_s = k_loadgen_min_duration_s;
  /// --percentiles: further percentiles of each probe's summary.json ITL, as `servesim run`.
  std::vector<double> percentiles;
  /// --percentiles, --export: record every token's time of each probe, keeping those of the
  /// probe at the capacity (CapacityResult::tokens). Off, the probes cost nothing more.
  bool keep_tokens = false;
};

struct CapacityProbe {
  double rate_scale = 0;
  bool meets_slo = false;
  Probe run;
};

struct CapacityResult {
  std::vector<CapacityProbe> probes;  ///< in the order run
  /// The highest scale that met the SLOs and the lowest that did not (indices into probes);
  /// none: no scale met them (down to min_scale) / every scale did (up to max_scale).
  std::optional<size_t> meeting, failing;
  /// With keep_tokens: every token's time of probes[*meeting] (null when none met the SLOs).
  std::shared_ptr<TokenTimes> tokens;
};

/// Runs the search on `text` (named `file`) with `overrides` applied first. Throws InputError
/// when the config is refused or has no `slo` section.
[[nodiscard]] CapacityResult find_capacity(const std::string& text, const std::string& file,
                                           const std::vector<std::string>& overrides,
                                           const CapacityOptions& options);

}  // namespace servesim
