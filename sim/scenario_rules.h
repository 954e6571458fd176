#pragma once
// Rules that tie one section of a scenario to another, checked in one place when the scenario
// is built (sim/scenario.cpp, sim/cluster.cpp) rather than inside the plugins' factories, which
// read only their own section. Each throws InputError at the key to change, naming both values.
#include <string>

#include "core/config.h"
#include "core/kv/kv_manager.h"
#include "schedulers/scheduler.h"
#include "sim/pool.h"

namespace servesim {

/// A replica's `scheduler` section against its `kv` section (both already read by their
/// factories): vllm needs kv.policy: paged, and its enable_prefix_caching must agree with
/// kv.prefix_caching.
void check_scheduler_and_kv(const Cfg& scheduler, const Cfg& kv);

/// Gives a replica's scheduler its own KV manager (Scheduler::bind_kv), once per replica when
/// it is built; a mismatch is refused at the `scheduler` section's key.
void bind_scheduler_to_kv(const Cfg& scheduler, Scheduler& s, const KvManager& kv);

/// A prefill or decode pool (`name`, `role`) needs an iteration-level scheduler.
void check_pool_role(const Cfg& scheduler, PoolRole role, const std::string& name);

}  // namespace servesim
