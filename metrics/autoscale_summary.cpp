#include "metrics/autoscale_summary.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

namespace servesim {

AutoscaleSummary autoscale_summary(const AutoscaleStats& a) {
  const AutoscaleSpec& spec = *a.spec;
  AutoscaleSummary s;
  s.signal = signal_name(spec.signal);
  s.target = spec.target;
  s.min = spec.min;
  s.max = spec.max;
  s.horizon_s = a.horizon_s;
  s.replica_hours = a.replica_seconds / 3600.0;
  s.accelerator_hours = s.replica_hours * static_cast<double>(spec.accelerators_per_replica);
  if (spec.usd_per_replica_hour > 0) {
    s.usd = s.replica_hours * spec.usd_per_replica_hour;
    s.usd_per_replica_hour = spec.usd_per_replica_hour;
    s.price_tier = spec.price_tier;
  }
  s.scale_ups = a.scale_ups;
  s.scale_downs = a.scale_downs;
  s.min_replicas = a.min_held;
  s.max_replicas = a.max_held;
  s.mean_replicas = a.horizon_s > 0 ? a.replica_seconds / a.horizon_s : 0.0;
  s.min_live = a.min_live;
  s.max_live = a.max_live;
  return s;
}

std::string autoscale_csv(const AutoscaleStats& a) {
  std::string out = "time_s,event,replica,signal,live,provisioning,draining,paid\n";
  auto it = std::back_inserter(out);
  for (const AutoscaleRow& r : a.timeline) {
    const std::string_view e = r.event;
    const bool one = e != "start" && e != "tick" && e != "end";  // names the replica it moved
    fmt::format_to(it, "{:.3f},{},{},", r.t.seconds(), e, one ? fmt::format("{}", r.replica) : "");
    if (!std::isnan(r.signal)) fmt::format_to(it, "{:.6g}", r.signal);
    fmt::format_to(it, ",{},{},{},{}\n", r.live, r.provisioning, r.draining,
                   r.live + r.provisioning + r.draining);
  }
  return out;
}

}  // namespace servesim
