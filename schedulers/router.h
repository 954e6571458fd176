#pragma once
// Routers: which replica of a cluster serves an arriving request (cluster.router).
//
// CONTRACT. The engine calls route() once per request, at the instant it reaches the router,
// with each replica's load as the router sees it (possibly a stale snapshot: cluster.router.
// load_refresh_ms). It returns a replica index below loads.size(). A router may keep state
// (a turn counter, where a session went last) and draws randomness only from the Rng it was
// given, so a seed gives the same routing. docs/cluster.md defines every policy.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/request.h"

namespace servesim {

/// What a router may know of a replica.
struct ReplicaLoad {
  int64_t outstanding = 0;  ///< requests queued or running there
  int64_t kv_used_tokens = 0;
  int64_t kv_capacity_tokens = 0;
  /// Multi-LoRA (docs/lora.md): where the routed request's adapter is on this replica, 2 in a
  /// GPU slot, 1 in host memory only, 0 neither (or the request uses the base model).
  uint8_t adapter_residency = 0;
};

class Router {
 public:
  virtual ~Router() = default;
  [[nodiscard]] virtual uint32_t route(const RequestSpec& r,
                                       std::span<const ReplicaLoad> loads) = 0;
};

/// The one way to build a router (the router table in schedulers/routers.cpp, where each
/// router's own factory lives): reads cluster.router's `kind` and that kind's keys.
[[nodiscard]] std::unique_ptr<Router> make_router(const Cfg& router, uint64_t seed);
[[nodiscard]] std::vector<std::string> router_names();

}  // namespace servesim
