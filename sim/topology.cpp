#include "sim/topology.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <limits>

namespace servesim {
namespace {

struct EdgeProps {
  double weight = 0;
  uint32_t edge = 0;  // index into Topology's edges
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    boost::no_property, EdgeProps>;
// Ties between paths of equal latency go to the one with fewer hops.
constexpr double k_hop_ns = 1e-6;

}  // namespace

Topology::Topology(uint32_t node_count, std::vector<Edge> edges,
                   std::vector<double> link_bytes_per_ns)
    : m_nodes(node_count),
      m_edges(std::move(edges)),
      m_bandwidth(std::move(link_bytes_per_ns)),
      m_from_index(node_count, -1),
      m_to_index(node_count, -1) {}

std::optional<std::pair<uint32_t, uint32_t>> Topology::route_all(const std::vector<uint32_t>& from,
                                                                 const std::vector<uint32_t>& to) {
  Graph g(m_nodes);
  for (uint32_t i = 0; i < m_edges.size(); ++i)
    boost::add_edge(m_edges[i].a, m_edges[i].b, EdgeProps{m_edges[i].latency_ns + k_hop_ns, i}, g);
  m_to_count = to.size();
  for (size_t j = 0; j < to.size(); ++j) m_to_index[to[j]] = static_cast<int32_t>(j);
  m_paths.assign(from.size() * to.size(), Stored{});
  std::vector<Graph::vertex_descriptor> pred(m_nodes);
  std::vector<double> dist(m_nodes);
  std::vector<uint32_t> hops;
  for (size_t i = 0; i < from.size(); ++i) {
    m_from_index[from[i]] = static_cast<int32_t>(i);
    boost::dijkstra_shortest_paths(g, from[i],
                                   boost::predecessor_map(pred.data())
                                       .distance_map(dist.data())
                                       .weight_map(boost::get(&EdgeProps::weight, g)));
    for (size_t j = 0; j < to.size(); ++j) {
      if (dist[to[j]] == std::numeric_limits<double>::max()) return std::pair{from[i], to[j]};
      Stored& p = m_paths[i * to.size() + j];
      hops.clear();
      for (auto v = static_cast<Graph::vertex_descriptor>(to[j]); v != from[i]; v = pred[v]) {
        // Of parallel edges between the two nodes, the lightest is the one taken.
        const Edge* best = nullptr;
        for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
          if (boost::target(*e, g) != pred[v]) continue;
          const Edge& cand = m_edges[g[*e].edge];
          if (!best || cand.latency_ns < best->latency_ns) best = &cand;
        }
        p.latency_ns += best->latency_ns;
        if (best->link >= 0) hops.push_back(static_cast<uint32_t>(best->link));
      }
      std::reverse(hops.begin(), hops.end());
      p.first = static_cast<uint32_t>(m_links.size());
      p.count = static_cast<uint32_t>(hops.size());
      m_links.insert(m_links.end(), hops.begin(), hops.end());
    }
  }
  return std::nullopt;
}

Topology::Path Topology::path(uint32_t from_node, uint32_t to_node) const {
  const Stored& p = m_paths[static_cast<size_t>(m_from_index[from_node]) * m_to_count +
                            static_cast<size_t>(m_to_index[to_node])];
  return {std::span<const uint32_t>(m_links.data() + p.first, p.count), p.latency_ns};
}

}  // namespace servesim
