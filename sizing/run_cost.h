#pragma once
// The cost of a run, for the report's run comparison (docs/report.md#summary): the catalogue's
// price of the run's accelerator times the accelerators the run stands for, as `servesim size`
// prices a sweep point (docs/sizing.md#cost).
#include <nlohmann/json.hpp>

namespace servesim {

/// From a run's summary.json: {"hardware", "accelerators", "price_tier",
/// "usd_per_accelerator_hour", "usd_per_hour", "tokens_per_usd"}, or null when the cost is not
/// known: no catalogue accelerator in the resolved config (`step_time.hardware`, else
/// `kv.memory.hardware`; a hardware file given by path is not priced, its folder being unknown
/// here), disaggregated pools, or no price. The accelerators are `slo.accelerators` when the run
/// has an SLO, else tensor x data parallel of `step_time` (else `kv.memory.tensor_parallel`, else
/// 1) times `cluster.replicas`; an autoscaled run's usd_per_hour is on the accelerators it paid for
/// on average (its `autoscale` block's accelerator_hours over horizon_s). Priced in the `on_demand`
/// tier, else `mixed` (the tier is named). Never throws for a summary it cannot price.
[[nodiscard]] nlohmann::json run_cost_json(const nlohmann::json& summary);

}  // namespace servesim
