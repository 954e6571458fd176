#include "schedulers/sglang_dfs.h"

#include <algorithm>

namespace servesim {

void DfsWeightOrder::compute(SchedulerView& s) {
  const std::deque<uint32_t>& q = s.waiting();
  KvManager& kv = s.kv();
  const int64_t block = std::max<int64_t>(kv.block_tokens(), 1);
  m_start.clear();
  m_depth.clear();
  m_keys.clear();
  m_nodes.clear();
  for (size_t i = 0; i < q.size(); ++i) {
    Request& r = s.req(q[i]);
    const int64_t d = kv.cached_prefix_tokens(r) / block;
    m_start.push_back(static_cast<uint32_t>(m_keys.size()));
    m_depth.push_back(static_cast<uint32_t>(d));
    for (int64_t j = 0; j < d; ++j) {
      const uint64_t key = kv.prefix_block_key(r, j);
      m_keys.push_back(key);
      m_nodes.push_back({key, static_cast<uint32_t>(j), static_cast<uint32_t>(i), 1});
    }
  }
  // One node per (depth, key): its weight is how many paths pass through it, its `first` the
  // earliest of them.
  std::sort(m_nodes.begin(), m_nodes.end(), [](const Node& a, const Node& b) {
    if (a.depth != b.depth) return a.depth < b.depth;
    if (a.key != b.key) return a.key < b.key;
    return a.first < b.first;
  });
  size_t kept = 0;
  for (size_t i = 0; i < m_nodes.size(); ++i) {
    if (kept > 0 && m_nodes[kept - 1].depth == m_nodes[i].depth &&
        m_nodes[kept - 1].key == m_nodes[i].key) {
      ++m_nodes[kept - 1].weight;
    } else {
      m_nodes[kept++] = m_nodes[i];
    }
  }
  m_nodes.resize(kept);
  m_pos.resize(q.size());
  for (uint32_t i = 0; i < m_pos.size(); ++i) m_pos[i] = i;
  std::sort(m_pos.begin(), m_pos.end(), [&](uint32_t a, uint32_t b) { return before(a, b); });
  m_order.clear();
  for (const uint32_t p : m_pos) m_order.push_back(q[p]);
}

const DfsWeightOrder::Node& DfsWeightOrder::node(uint64_t key, uint32_t depth) const {
  const auto it = std::lower_bound(
      m_nodes.begin(), m_nodes.end(), std::pair{depth, key}, [](const Node& n, const auto& v) {
        return n.depth != v.first ? n.depth < v.first : n.key < v.second;
      });
  return *it;  // every path's key is a node
}

// The depth-first order: where the two paths part, the heavier child first (then the one whose
// first request is earlier); a path that ends there (its request sits at that node) after
// every child; two requests at the same node in queue order.
bool DfsWeightOrder::before(uint32_t a, uint32_t b) const {
  const uint32_t da = m_depth[a], db = m_depth[b];
  const uint64_t* ka = m_keys.data() + m_start[a];
  const uint64_t* kb = m_keys.data() + m_start[b];
  uint32_t t = 0;
  while (t < da && t < db && ka[t] == kb[t]) ++t;
  if (t < da && t < db) {
    const Node& x = node(ka[t], t);
    const Node& y = node(kb[t], t);
    if (x.weight != y.weight) return x.weight > y.weight;
    return x.first < y.first;
  }
  if (t < da) return true;
  if (t < db) return false;
  return a < b;
}

size_t DfsWeightOrder::next(const SchedulerView& s) const {
  const std::deque<uint32_t>& q = s.waiting();
  for (const uint32_t slot : m_order) {
    if (s.req(slot).state != RequestState::Queued) continue;
    const auto it = std::find(q.begin(), q.end(), slot);
    if (it != q.end()) return static_cast<size_t>(it - q.begin());
  }
  return q.size();
}

}  // namespace servesim
