#pragma once
// A run's energy (docs/metrics.md#energy). Each accelerator draws
//   P(step) = idle_w + (peak_w - idle_w) x activity
// during a step and idle_w between steps, where a step's activity is the share of its time the
// busier of memory and arithmetic would need at the chip's peak: max(bytes / peak bandwidth,
// flops / peak FLOP/s) / step time, at most 1 (max(MBU, MFU) of that one step); a step whose
// model reports no bytes or flops (measured tables, fitted lines) counts at activity 1. So a
// replica of n accelerators over a run of T seconds uses
//   E = n x (idle_w x T + (peak_w - idle_w) x sum over its steps of activity x step time)
// joules: the integral of its power over the run. The run's energy sums its replicas. With
// cluster.autoscale, T is the time the replica was paid for (sim/autoscaler.h): a parked one
// draws nothing, a provisioning one its idle power.
#include <cstdint>
#include <optional>
#include <span>

#include "metrics/summary_fields.h"
#include "models/catalog.h"
#include "sim/simulation.h"

namespace servesim {

/// summary.json's `energy` block.
struct EnergySummary {
  int64_t accelerators = 0;       ///< all replicas' accelerators
  double joules = 0;              ///< the run's energy, every accelerator, first arrival to end
  double joules_per_request = 0;  ///< joules / finished requests (0: none finished)
  double joules_per_output_token = 0;  ///< joules / output tokens of finished requests
  double output_tokens_per_joule = 0;  ///< output tokens / joules
  double mean_power_w = 0;             ///< joules / duration
  double idle_joules = 0;              ///< the idle_w x duration part of joules
  double busy_activity = 0;            ///< sum of activity x step time / busy time (all replicas)
  double steps_at_peak_share = 0;      ///< steps without a cost, counted at activity 1
};

template <class F>
void for_each_field(const EnergySummary& e, F&& f) {
  f(Field("accelerators"), e.accelerators);
  f(Field("joules"), e.joules);
  f(Field("joules_per_request"), e.joules_per_request);
  f(Field("joules_per_output_token"), e.joules_per_output_token);
  f(Field("output_tokens_per_joule"), e.output_tokens_per_joule);
  f(Field("mean_power_w"), e.mean_power_w);
  f(Field("idle_joules"), e.idle_joules);
  f(Field("busy_activity"), e.busy_activity);
  f(Field("steps_at_peak_share"), e.steps_at_peak_share);
}

/// The energy of a run of `duration_s` seconds from its stats, with replica i's accelerators
/// `accelerators[i]`, each drawing `power[i]`. Nullopt when `power` is empty (a chip or its power
/// unknown) or does not cover every replica, or when duration_s is not positive.
[[nodiscard]] std::optional<EnergySummary> energy_summary(const RunStats& stats,
                                                          std::span<const PowerSpec> power,
                                                          std::span<const int64_t> accelerators,
                                                          double duration_s, int64_t finished,
                                                          int64_t output_tokens);

}  // namespace servesim
