#pragma once
// The `cluster` section: several replicas of the scenario's engine behind a router
// (docs/cluster.md).
#include <cstdint>

#include "sim/config.h"
#include "sim/simulation.h"

namespace servesim {

/// Reads `cluster` when present: adds replicas 1..N-1 to `c` (each with its own scheduler and
/// KV memory built from the scenario's `scheduler` and `kv` sections, all sharing replica 0's
/// step-time model) and the router. Without the section the scenario is one replica.
void read_cluster(const Cfg& root, uint64_t seed, Components& c);

}  // namespace servesim
