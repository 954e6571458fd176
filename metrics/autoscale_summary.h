#pragma once
// summary.json's `autoscale` block and autoscale.csv, the replica count over time
// (docs/autoscaling.md#results), from the engine's books (sim/autoscaler.h).
#include <cstdint>
#include <optional>
#include <string>

#include "metrics/summary_fields.h"
#include "sim/autoscaler.h"

namespace servesim {

struct AutoscaleSummary {
  std::string signal;
  double target = 0;
  int64_t min = 0, max = 0;
  double horizon_s = 0;          ///< from 0 to the run's end
  double replica_hours = 0;      ///< integral of paid (provisioning, live, draining) replicas
  double accelerator_hours = 0;  ///< replica_hours x accelerators per replica
  std::optional<double> usd;     ///< replica_hours x the catalogue's price (null: no price)
  std::optional<double> usd_per_replica_hour;
  std::string price_tier;
  int64_t scale_ups = 0, scale_downs = 0;
  int64_t min_replicas = 0, max_replicas = 0;  ///< paid replicas at any instant
  double mean_replicas = 0;                    ///< replica_hours / horizon
  int64_t min_live = 0, max_live = 0;
};

template <class F>
void for_each_field(const AutoscaleSummary& a, F&& f) {
  f(Field("signal"), a.signal);
  f(Field("target"), a.target);
  f(Field("min"), a.min);
  f(Field("max"), a.max);
  f(Field("horizon_s"), a.horizon_s);
  f(Field("replica_hours"), a.replica_hours);
  f(Field("accelerator_hours"), a.accelerator_hours);
  f(Field("usd"), a.usd);
  f(Field("usd_per_replica_hour"), a.usd_per_replica_hour);
  f(Field("price_tier"), a.price_tier);
  f(Field("scale_ups"), a.scale_ups);
  f(Field("scale_downs"), a.scale_downs);
  f(Field("min_replicas"), a.min_replicas);
  f(Field("max_replicas"), a.max_replicas);
  f(Field("mean_replicas"), a.mean_replicas);
  f(Field("min_live"), a.min_live);
  f(Field("max_live"), a.max_live);
}

[[nodiscard]] AutoscaleSummary autoscale_summary(const AutoscaleStats& a);
/// autoscale.csv: one row per decision and per replica changing phase, with the counts after it:
/// time_s,event,replica,signal,live,provisioning,draining,paid.
[[nodiscard]] std::string autoscale_csv(const AutoscaleStats& a);

}  // namespace servesim
