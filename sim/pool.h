#pragma once
// The pools of a heterogeneous or disaggregated cluster (cluster.pools, docs/cluster.md).
#include <cstdint>
#include <string>

namespace servesim {

enum class PoolRole : uint8_t { Mixed, Prefill, Decode };

/// One pool of a heterogeneous or disaggregated cluster (cluster.pools): replicas
/// [first_replica, first_replica + replicas) of the engine.
struct PoolSpec {
  std::string name;
  PoolRole role = PoolRole::Mixed;
  uint32_t first_replica = 0;
  uint32_t replicas = 0;
  int64_t accelerators_per_replica = 1;  ///< tensor x data parallel (slo.accelerators)
  double kv_bytes_per_token = 0;         ///< KV moved per prompt token (prefill pools)
};

}  // namespace servesim
