#pragma once
// The `cluster` section: several replicas behind a router (docs/cluster.md). Either
// `replicas: N` copies of the scenario's engine, or `pools`: groups of replicas, each with its
// own step-time model, KV memory and scheduler, and a role (mixed, or prefill / decode for a
// disaggregated cluster, whose KV transfers cross `links`).
#include <cstdint>
#include <memory>
#include <vector>

#include "core/config.h"
#include "models/step_time_model.h"
#include "schedulers/scheduler.h"
#include "sim/simulation.h"

namespace servesim {

/// A step-time model and where it was read (the owner's `step_time` section, or the root of
/// the file that section names), wrapped in the host time and CUDA graphs that
/// `scheduler_owner`'s scheduler section asks for (models/host_time.h). Defined in
/// sim/scenario.cpp.
struct StepTimeSection {
  std::unique_ptr<StepTimeModel> model;
  Cfg section;
};
[[nodiscard]] StepTimeSection read_step_time(const Cfg& owner, const Cfg& scheduler_owner);
/// The accelerators one replica stands for (slo.accelerators): the step model's tensor x data
/// parallel, else kv.memory's tensor_parallel, else 1. Defined in sim/scenario.cpp.
[[nodiscard]] int64_t accelerators_of(const Cfg& step_time, const Cfg& kv);
/// The accelerator a replica's engine finds at start-up, for the scheduler's defaults: the
/// catalogue entry (or file) named by `step_time.hardware`, else `kv.memory.hardware`, else
/// `kv.memory.accelerator_gib` (memory only); unknown when none is given. REQUIRES: the sections
/// have been read and checked. Defined in sim/scenario.cpp.
[[nodiscard]] AcceleratorInfo accelerator_info_of(const Cfg& step_time, const Cfg& kv);

/// Whether the scenario's engine comes from cluster.pools (then the top-level step_time, kv
/// and scheduler sections are only defaults for the pools that give none).
[[nodiscard]] bool has_pools(const Cfg& root);

/// Replicas whose accelerators are counted alike (accelerators_of their sections).
struct AcceleratorGroup {
  Cfg step_time;  ///< the step-time section (or its file's root)
  Cfg kv;
  int64_t replicas = 0;
};

/// Reads `cluster` when present. With `replicas`: adds replicas 1..N-1 to `c` (N: autoscale.max
/// with `autoscale`, which also sets c.autoscale) (each with its
/// own scheduler and KV memory built from the scenario's sections, sharing replica 0's
/// step-time model) and the router. With `pools`: builds every replica, replica 0 included,
/// the pools (in replica order), links and decode router. Returns the replicas' groups for
/// counting accelerators: one per pool, in pool order; one with `replicas` (`top_step_time`
/// is the scenario's step-time section, unused with pools); none without the section.
std::vector<AcceleratorGroup> read_cluster(const Cfg& root, uint64_t seed, Components& c,
                                           const Cfg* top_step_time);

class Topology;
/// Reads cluster.links and cluster.switches, or without links one link per prefill -> decode
/// pool pair from cluster.kv_transfer (sim/disagg_config.cpp). Node ids: pool p is p, replica
/// i is pools.size() + i, switches follow. Fails unless every prefill replica reaches every
/// decode replica.
[[nodiscard]] std::shared_ptr<const Topology> read_links(const Cfg& cluster,
                                                         const std::vector<PoolSpec>& pools);

}  // namespace servesim
