#include "sim/cluster.h"

#include "schedulers/scheduler.h"
#include "sim/kv_manager.h"

namespace servesim {

void read_cluster(const Cfg& root, uint64_t seed, Components& c) {
  const std::optional<Cfg> cluster = root.optional_child("cluster");
  if (!cluster) return;
  const int64_t replicas = cluster->get_int("replicas", {1, 4096});
  const Cfg router = cluster->child("router");
  c.router = make_router(router, seed ^ 0x726f75746572ull);  // "router": its own stream
  c.router_delay = Time::from_ms(router.get_real("delay_ms", 0.0, {0.0, 1e6, false}));
  c.load_refresh = Time::from_ms(router.get_real("load_refresh_ms", 0.0, {0.0, 1e9, false}));
  for (int64_t i = 1; i < replicas; ++i)
    c.more_replicas.push_back(
        {c.step_time, make_scheduler(root.child("scheduler")), make_kv_manager(root.child("kv"))});
}

}  // namespace servesim
