#include "sim/cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/kv/kv_manager.h"
#include "core/units.h"
#include "models/catalog.h"
#include "models/kv_memory.h"
#include "schedulers/scheduler.h"
#include "sim/scenario_rules.h"
#include "sim/topology.h"

namespace servesim {
namespace {

constexpr const char* k_sections[] = {"kv", "scheduler", "step_time"};

void read_router(const Cfg& cluster, uint64_t seed, Components& c) {
  const Cfg router = cluster.child("router");
  c.router = make_router(router, seed ^ 0x726f75746572ull);  // "router": its own stream
  c.router_delay = Time::from_ms(router.get_real("delay_ms", 0.0, {0.0, 1e6, false}));
  c.load_refresh = Time::from_ms(router.get_real("load_refresh_ms", 0.0, {0.0, 1e9, false}));
}

/// The pool's own section, else the scenario's (a pool's section replaces it whole).
Cfg section_of(const Cfg& root, const Cfg& pool, const std::string& name,
               const std::string& pool_name) {
  if (pool.has(name)) return pool;
  if (!root.has(name))
    pool.fail(name, fmt::format("pool {} gives no {} section and the scenario has none at "
                                "the top level: give one here or there",
                                quote_input(pool_name), name));
  return root;
}

/// KV bytes one prompt token moves: cluster.kv_transfer.kv_bytes_per_token, else the pool's
/// kv.memory model shape, else its roofline step-time model's catalogue entry.
double kv_bytes_per_token(const std::optional<Cfg>& transfer, const Cfg& kv, const Cfg& step_time,
                          const Cfg& pool) {
  if (transfer && transfer->has("kv_bytes_per_token"))
    return plausible_real(*transfer, "kv_bytes_per_token", units::k_bytes_per_token);
  if (const std::optional<Cfg> m = kv.optional_child("memory")) {
    if (m->has("model"))  // the whole token's KV, as the explicit figures below
      return read_model(*m, "model").kv_bytes_per_token(read_dtype(*m, "kv_dtype", Dtype::Fp16));
    return 2.0 *
           static_cast<double>(m->get_int("layers", {1, 100000}) *
                               m->get_int("kv_heads", {1, 100000}) *
                               m->get_int("head_dim", {1, 100000})) *
           dtype_bytes(*parse_dtype(m->get_string("kv_dtype", "fp16")));
  }
  if (step_time.has("model") && step_time.get_string("kind") == "roofline") {
    const Dtype weight = read_dtype(step_time, "weight_dtype", Dtype::Bf16);
    return read_model(step_time, "model")
        .kv_bytes_per_token(read_dtype(step_time, "kv_dtype", weight));
  }
  pool.fail("",
            "a prefill pool's KV size per token is unknown (no kv.memory, no roofline "
            "step_time model): give cluster.kv_transfer.kv_bytes_per_token");
}

PoolRole read_role(const Cfg& pool) {
  const std::string role = pool.get_choice("role", "mixed", {"decode", "mixed", "prefill"});
  return role == "prefill"  ? PoolRole::Prefill
         : role == "decode" ? PoolRole::Decode
                            : PoolRole::Mixed;
}

// Builds one pool's replicas into `c`; returns its accelerator group.
AcceleratorGroup build_pool(const Cfg& root, const Cfg& pool, PoolSpec& spec, Components& c) {
  const Cfg st_owner = section_of(root, pool, "step_time", spec.name);
  const Cfg kv_owner = section_of(root, pool, "kv", spec.name);
  const Cfg sched_owner = section_of(root, pool, "scheduler", spec.name);
  StepTimeSection st = read_step_time(st_owner, sched_owner);
  std::shared_ptr<const StepTimeModel> model = std::move(st.model);
  check_pool_role(sched_owner.child("scheduler"), spec.role, spec.name);
  const AcceleratorInfo accelerator = accelerator_info_of(st.section, kv_owner.child("kv"));
  for (uint32_t i = 0; i < spec.replicas; ++i) {
    c.replicas.push_back({model, make_scheduler(sched_owner.child("scheduler"), accelerator),
                          make_kv_manager(kv_owner.child("kv"), &read_kv_memory)});
    if (i == 0) check_scheduler_and_kv(sched_owner.child("scheduler"), kv_owner.child("kv"));
    share_offload_tiers(*c.replicas[c.replicas.size() - 1 - i].kv, *c.replicas.back().kv);
    bind_scheduler_to_kv(sched_owner.child("scheduler"), *c.replicas.back().scheduler,
                         *c.replicas.back().kv);
  }
  return {st.section, kv_owner.child("kv"), spec.replicas};
}

// A pool's section replaces the scenario's whole; a scenario section no pool uses is a mistake.
void check_unused_sections(const Cfg& root, const Cfg& cluster, const std::vector<Cfg>& pools) {
  for (const char* name : k_sections) {
    if (!root.has(name)) continue;
    if (std::all_of(pools.begin(), pools.end(), [&](const Cfg& p) { return p.has(name); }))
      cluster.fail("pools", fmt::format("every pool gives its own {0} section, so the scenario's "
                                        "top-level {0} would be ignored: remove it (a pool's "
                                        "section replaces the top-level one whole)",
                                        name));
  }
}

}  // namespace

bool has_pools(const Cfg& root) {
  const std::optional<Cfg> cluster = root.optional_child("cluster");
  return cluster && cluster->has("pools");
}

std::vector<AcceleratorGroup> read_cluster(const Cfg& root, uint64_t seed, Components& c,
                                           const Cfg* top_step_time) {
  const std::optional<Cfg> cluster = root.optional_child("cluster");
  if (!cluster) return {};
  if (cluster->one_of({"pools", "replicas"}) == "replicas") {
    int64_t replicas = cluster->get_int("replicas", {1, 4096});
    read_router(*cluster, seed, c);
    // Autoscaled: every replica it may use is built; cluster.replicas are live at the start.
    c.autoscale = read_autoscale(*cluster, replicas);
    if (c.autoscale) replicas = c.autoscale->max;
    const AcceleratorInfo accelerator = accelerator_info_of(*top_step_time, root.child("kv"));
    for (int64_t i = 1; i < replicas; ++i) {
      c.replicas.push_back({c.replicas.front().step_time,
                            make_scheduler(root.child("scheduler"), accelerator),
                            make_kv_manager(root.child("kv"), &read_kv_memory)});
      share_offload_tiers(*c.replicas.front().kv, *c.replicas.back().kv);
      bind_scheduler_to_kv(root.child("scheduler"), *c.replicas.back().scheduler,
                           *c.replicas.back().kv);
    }
    return {{*top_step_time, root.child("kv"), replicas}};
  }
  if (cluster->has("autoscale"))
    cluster->fail("autoscale",
                  "autoscaling is modelled for cluster.replicas only, not for pools "
                  "(docs/autoscaling.md): give replicas instead of pools");
  read_router(*cluster, seed, c);
  const std::vector<Cfg> pools = cluster->list_of_maps("pools");
  check_unused_sections(root, *cluster, pools);
  const std::optional<Cfg> transfer = cluster->optional_child("kv_transfer");
  std::vector<AcceleratorGroup> groups;
  uint32_t next = 0;
  std::map<std::string, size_t> names;
  for (const Cfg& pool : pools) {
    PoolSpec spec;
    spec.name = pool.get_string("name");
    if (spec.name.empty() || spec.name.find_first_of("[] ") != std::string::npos)
      pool.fail("name", "must be a non-empty name without spaces or brackets");
    if (!names.emplace(spec.name, c.pools.size()).second)
      pool.fail("name", fmt::format("pool {} is named twice", quote_input(spec.name)));
    spec.role = read_role(pool);
    spec.replicas = static_cast<uint32_t>(pool.get_int("replicas", {1, 4096}));
    spec.first_replica = next;
    next += spec.replicas;
    if (next > 4096) pool.fail("replicas", "a cluster has at most 4,096 replicas in all");
    groups.push_back(build_pool(root, pool, spec, c));
    c.pools.push_back(std::move(spec));
  }
  const auto count = [&](PoolRole r) {
    return std::count_if(c.pools.begin(), c.pools.end(),
                         [&](const PoolSpec& p) { return p.role == r; });
  };
  const bool disagg = count(PoolRole::Prefill) + count(PoolRole::Decode) > 0;
  if (disagg &&
      (count(PoolRole::Prefill) == 0 || count(PoolRole::Decode) == 0 || count(PoolRole::Mixed) > 0))
    cluster->fail("pools",
                  "a disaggregated cluster needs at least one prefill pool and one "
                  "decode pool, and no mixed pool (every pool's role: prefill or decode)");
  if (!disagg) {
    for (const char* key : {"decode_router", "links", "kv_transfer", "switches"})
      if (cluster->has(key))
        cluster->fail(key, "only for a disaggregated cluster (pools with role prefill and decode)");
    return groups;
  }
  c.decode_router = make_router(cluster->child("decode_router"), seed ^ 0x6465636f6465ull);
  for (size_t i = 0; i < c.pools.size(); ++i)
    if (c.pools[i].role == PoolRole::Prefill)
      c.pools[i].kv_bytes_per_token =
          kv_bytes_per_token(transfer, groups[i].kv, groups[i].step_time, pools[i]);
  c.topology = read_links(*cluster, c.pools);
  return groups;
}

}  // namespace servesim
