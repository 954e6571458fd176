// cluster.links, cluster.switches and cluster.kv_transfer (docs/cluster.md#links).
#include <fmt/format.h>

#include <map>

#include "core/units.h"
#include "sim/cluster.h"
#include "sim/topology.h"

namespace servesim {
namespace {

struct Nodes {
  std::map<std::string, uint32_t> ids;  // pools, switches and "pool[i]" replicas
  std::vector<std::string> names;       // by id
  uint32_t add(const std::string& name) {
    ids.emplace(name, static_cast<uint32_t>(names.size()));
    names.push_back(name);
    return static_cast<uint32_t>(names.size() - 1);
  }
};

uint32_t node_of(const Cfg& link, const std::string& key, const Nodes& nodes) {
  const std::string name = link.get_string(key);
  if (const auto it = nodes.ids.find(name); it != nodes.ids.end()) return it->second;
  std::vector<std::string> valid;
  for (const auto& [n, id] : nodes.ids)
    if (n.find('[') == std::string::npos) valid.push_back(n);
  link.fail(key, fmt::format("not a pool, a replica (pool[i], i below the pool's replicas) or a "
                             "switch of cluster.switches (pools and switches: {})",
                             join_names(valid)));
}

}  // namespace

std::shared_ptr<const Topology> read_links(const Cfg& cluster, const std::vector<PoolSpec>& pools) {
  Nodes nodes;
  for (const PoolSpec& p : pools) nodes.add(p.name);
  std::vector<Topology::Edge> edges;
  for (uint32_t p = 0; p < pools.size(); ++p)
    for (uint32_t i = 0; i < pools[p].replicas; ++i)
      edges.push_back({nodes.add(fmt::format("{}[{}]", pools[p].name, i)), p, -1, 0.0});
  std::vector<double> bandwidth;
  const RealRange latency_range{0.0, 1e9, false};
  if (!cluster.has("links")) {
    const Cfg t = cluster.child("kv_transfer");
    const double gb_s = plausible_real(t, "bandwidth_gb_s", units::k_gb_per_s);
    const double latency_ns = t.get_real("latency_us", 0.0, latency_range) * 1e3;
    if (cluster.has("switches")) cluster.fail("switches", "only with cluster.links");
    for (uint32_t a = 0; a < pools.size(); ++a)
      for (uint32_t b = 0; b < pools.size(); ++b)
        if (pools[a].role == PoolRole::Prefill && pools[b].role == PoolRole::Decode) {
          edges.push_back({a, b, static_cast<int32_t>(bandwidth.size()), latency_ns});
          bandwidth.push_back(gb_s);
        }
  } else {
    if (const std::optional<Cfg> t = cluster.optional_child("kv_transfer"))
      for (const char* key : {"bandwidth_gb_s", "latency_us"})
        if (t->has(key)) t->fail(key, "with cluster.links each link gives its own");
    if (cluster.has("switches"))
      for (const Cfg& sw : cluster.list_of_maps("switches")) {
        const std::string name = sw.get_string("name");
        if (name.empty() || nodes.ids.count(name))
          sw.fail("name", "must be a new name, not a pool's or a replica's or another switch's");
        nodes.add(name);
      }
    for (const Cfg& link : cluster.list_of_maps("links")) {
      const uint32_t a = node_of(link, "from", nodes);
      const uint32_t b = node_of(link, "to", nodes);
      if (a == b) link.fail("to", "a link joins two different nodes");
      const double gb_s = plausible_real(link, "bandwidth_gb_s", units::k_gb_per_s);
      const double latency_ns = link.get_real("latency_us", 0.0, latency_range) * 1e3;
      edges.push_back({a, b, static_cast<int32_t>(bandwidth.size()), latency_ns});
      bandwidth.push_back(gb_s);
    }
  }
  std::vector<uint32_t> from, to;
  for (uint32_t p = 0; p < pools.size(); ++p)
    for (uint32_t i = 0; i < pools[p].replicas; ++i)
      (pools[p].role == PoolRole::Prefill ? from : to)
          .push_back(static_cast<uint32_t>(pools.size()) + pools[p].first_replica + i);
  auto topo = std::make_shared<Topology>(static_cast<uint32_t>(nodes.names.size()),
                                         std::move(edges), std::move(bandwidth));
  if (const auto cut = topo->route_all(from, to))
    cluster.fail(cluster.has("links") ? "links" : "kv_transfer",
                 fmt::format("no path from {} to {}: every prefill replica must reach every "
                             "decode replica",
                             nodes.names[cut->first], nodes.names[cut->second]));
  return topo;
}

}  // namespace servesim
