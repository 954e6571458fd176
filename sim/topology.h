#pragma once
// The links KV transfers cross in a disaggregated cluster (cluster.links; docs/cluster.md).
//
// Nodes are pools, replicas and switches; edges are the configured links plus, for every
// replica, a free edge to its pool's node (no bandwidth limit, no latency), so that a link named
// after a pool serves all its replicas. A transfer follows the path of least total latency
// (Dijkstra), fewer hops breaking ties; paths are worked out once, before the run.
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace servesim {

class Topology {
 public:
  struct Edge {
    uint32_t a = 0, b = 0;  ///< node ids; a link is used both ways
    int32_t link = -1;      ///< index of a configured link; -1: a replica's free edge
    double latency_ns = 0;
  };
  struct Path {
    std::span<const uint32_t> links;  ///< configured links crossed, in order
    double latency_ns = 0;            ///< their latencies summed
  };

  /// `link_bytes_per_ns[i]` is link i's bandwidth (bytes per ns = GB/s).
  Topology(uint32_t node_count, std::vector<Edge> edges, std::vector<double> link_bytes_per_ns);

  /// Works out the path from every node of `from` to every node of `to`. Returns the first
  /// pair (from, to) with no path between them, or nothing when all are connected.
  [[nodiscard]] std::optional<std::pair<uint32_t, uint32_t>> route_all(
      const std::vector<uint32_t>& from, const std::vector<uint32_t>& to);
  /// REQUIRES: route_all covered the pair.
  [[nodiscard]] Path path(uint32_t from_node, uint32_t to_node) const;
  [[nodiscard]] const std::vector<double>& link_bytes_per_ns() const { return m_bandwidth; }

 private:
  struct Stored {
    uint32_t first = 0, count = 0;  // in m_links
    double latency_ns = 0;
  };
  uint32_t m_nodes;
  std::vector<Edge> m_edges;
  std::vector<double> m_bandwidth;
  std::vector<int32_t> m_from_index, m_to_index;  // node -> row / column of m_paths, or -1
  size_t m_to_count = 0;
  std::vector<Stored> m_paths;
  std::vector<uint32_t> m_links;
};

}  // namespace servesim
