#pragma once
// A scenario: a checked config turned into the components of one simulation.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "models/catalog.h"
#include "sim/benchmark_spec.h"
#include "sim/simulation.h"
#include "sim/slo.h"

namespace servesim {

/// The embedded default scenario (configs/default.yaml at build time).
extern const char* const k_default_scenario_yaml;

struct Scenario {
  std::shared_ptr<Document> doc;
  uint64_t seed = 1;
  Components components;
  std::optional<SloTargets> slo;           ///< the `slo` section, if any
  std::optional<BenchmarkSpec> benchmark;  ///< the `benchmark` section, if any
  /// Each replica's accelerators (its step model's tensor x data parallel, else
  /// kv.memory.tensor_parallel, else 1), in replica order: per-replica goodput per accelerator.
  std::vector<int64_t> replica_accelerators;
  /// Each replica's accelerator power (the catalogue's `power` of `step_time.hardware`, else
  /// `kv.memory.hardware`), in replica order; empty when any replica's chip or power is unknown
  /// (then the run reports no energy: metrics/energy.h).
  std::vector<PowerSpec> replica_power;
};

/// Reads every section, builds the components and rejects any key nobody read.
/// Throws InputError on any problem; nothing has been written when it does.
[[nodiscard]] Scenario build_scenario(std::shared_ptr<Document> doc);

}  // namespace servesim
