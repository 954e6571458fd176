#include "metrics/energy.h"

#include <algorithm>

namespace servesim {

std::optional<EnergySummary> energy_summary(const RunStats& stats, std::span<const PowerSpec> power,
                                            std::span<const int64_t> accelerators,
                                            double duration_s, int64_t finished,
                                            int64_t output_tokens) {
  const size_t n = stats.replicas.size();
  if (n == 0 || power.size() != n || accelerators.size() != n || !(duration_s > 0))
    return std::nullopt;
  EnergySummary e;
  double active_s = 0;
  int64_t busy_ns = 0;
  for (size_t i = 0; i < n; ++i) {
    const PowerSpec& p = power[i];
    const auto chips = static_cast<double>(accelerators[i]);
    const ReplicaStats& r = stats.replicas[i];
    e.accelerators += accelerators[i];
    // Autoscaled: a replica draws idle power only while it is paid for (provisioning, live or
    // draining); parked, it draws nothing. A replica down (cluster.failures) draws nothing
    // while it is (the two are not combined: sim/scenario.cpp refuses both at once).
    const double held_s =
        stats.autoscale ? stats.autoscale->held_s[i] : std::max(0.0, duration_s - r.down_s);
    e.idle_joules += chips * p.idle_w * held_s;
    e.joules += chips * (p.idle_w * held_s + (p.peak_w - p.idle_w) * r.active_s);
    active_s += r.active_s;
    busy_ns += r.busy_ns;
  }
  e.mean_power_w = e.joules / duration_s;
  if (finished > 0) e.joules_per_request = e.joules / static_cast<double>(finished);
  if (output_tokens > 0) e.joules_per_output_token = e.joules / static_cast<double>(output_tokens);
  if (e.joules > 0) e.output_tokens_per_joule = static_cast<double>(output_tokens) / e.joules;
  if (busy_ns > 0) e.busy_activity = active_s / (static_cast<double>(busy_ns) * 1e-9);
  if (stats.steps > 0)
    e.steps_at_peak_share =
        static_cast<double>(stats.steps - stats.costed_steps) / static_cast<double>(stats.steps);
  return e;
}

}  // namespace servesim
