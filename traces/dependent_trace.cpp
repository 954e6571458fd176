// A trace whose requests wait for others: multi-turn sessions and agent-style DAGs (servesim
// CSV's session_id / parent_id / think_s columns; docs/workloads.md, "Sessions and
// dependencies"). The trace is loaded whole into a Boost.Graph adjacency list, edges from a
// parent to each request that waits for it, and checked before the run: every parent exists,
// request_id values are unique, and there is no cycle (a depth-first search finds a back edge).
//
// During the run a request with parents arrives at
//     max(its arrival_s, the last parent's departure + its think_s),
// where a parent departs when its reply is released (or when it is rejected). The rows of one
// session are the turns of a conversation in file order: turn k+1 waits for turn k, and its
// prompt is turn k's whole context (prompt and reply) plus its own prompt_tokens, all of one
// token stream (RequestSpec::content_stream), so a prefix cache can reuse the earlier turns.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
// GCC 12 at -O2 warns that Boost's edge iterator (a boost::optional) may be used uninitialised
// inside depth_first_search; it is not (a known -Wmaybe-uninitialized false positive). The
// warning is reported at the header's lines, so it is silenced around the includes.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#pragma GCC diagnostic pop
#include <unordered_map>

#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

struct Node {
  RequestSpec spec;
  int64_t earliest_ns = 0;  // arrival_s
  int64_t think_ns = 0;
  uint64_t key = 0;
  size_t line = 0;
  uint32_t pending = 0;  // parents not yet departed
  int64_t last_departure_ns = 0;
};

/// Remembers the first back edge a depth-first search meets: a cycle's closing edge.
struct CycleFinder : boost::default_dfs_visitor {
  std::optional<Edge>* found;
  void back_edge(Edge e, const Graph&) const {
    if (!*found) *found = e;
  }
};

class DependentTrace final : public WorkloadSource {
 public:
  DependentTrace(TraceRowReader& rows, const std::string& name, const TraceOptions& options)
      : m_name(name) {
    if (options.skip_zero_tokens) m_counters.emplace_back(k_skipped_zero_tokens, 0);
    load(rows);
    m_classes = rows.class_names();
    m_tenants = rows.tenant_names();
    link(rows.has_request_ids());
    check_acyclic();
    for (Vertex v = 0; v < m_nodes.size(); ++v)
      if (m_nodes[v].pending == 0) m_roots.push_back(v);
    std::stable_sort(m_roots.begin(), m_roots.end(), [&](Vertex a, Vertex b) {
      return m_nodes[a].earliest_ns < m_nodes[b].earliest_ns;
    });
    m_waiting = m_nodes.size() - m_roots.size();
  }

  bool next(RequestSpec& out) override {
    if (m_next_root == m_roots.size()) return false;
    const Node& n = m_nodes[m_roots[m_next_root++]];
    out = n.spec;
    out.arrival = Time::ns(n.earliest_ns);
    return true;
  }
  size_t size_hint() const override { return m_nodes.size(); }
  std::vector<std::pair<std::string, int64_t>> counters() const override { return m_counters; }
  int64_t counters_total() const override {
    int64_t total = 0;
    for (const auto& c : m_counters) total += c.second;
    return total;
  }
  bool reactive() const override { return true; }
  size_t waiting() const override { return m_waiting; }
  const std::vector<std::string>& class_names() const override { return m_classes; }
  const std::vector<std::string>& tenant_names() const override { return m_tenants; }

  void on_depart(const Request& r, Time now, std::vector<RequestSpec>& ready) override {
    const Vertex v = r.spec.id;
    for (auto [e, end] = boost::out_edges(v, m_graph); e != end; ++e) {
      Node& child = m_nodes[boost::target(*e, m_graph)];
      child.last_departure_ns = std::max(child.last_departure_ns, now.count_ns());
      if (--child.pending != 0) continue;
      --m_waiting;
      int64_t after_ns = 0;
      const bool overflow =
          __builtin_add_overflow(child.last_departure_ns, child.think_ns, &after_ns);
      const int64_t at_ns = std::max(child.earliest_ns, after_ns);
      if (overflow || at_ns > k_max_arrival_ns)
        throw InputError(
            fmt::format("{}:{}: request {} would arrive past 9e9 s (its think_s "
                        "after its parents' replies); simulated time is int64 "
                        "nanoseconds",
                        m_name, child.line, child.key));
      ready.push_back(child.spec);
      ready.back().arrival = Time::ns(at_ns);
    }
  }

 private:
  void load(TraceRowReader& rows) {
    TraceRow row;
    uint64_t row_number = 0;
    // Per session: the latest turn so far, and the context it leaves (prompt + reply).
    std::unordered_map<uint64_t, Vertex> last_turn;
    while (rows.next(row)) {
      const uint64_t number = row_number++;
      if (row.skip) {
        ++m_counters.front().second;
        continue;
      }
      Node n;
      n.spec.id = m_nodes.size();
      n.spec.prompt_tokens = static_cast<int32_t>(row.prompt_tokens);
      n.spec.output_tokens = static_cast<int32_t>(row.output_tokens);
      n.spec.block_hashes = row.block_hashes;
      n.spec.hash_block_tokens = row.block_hashes.empty() ? 0 : row.hash_block_tokens;
      n.spec.session = row.session;
      n.spec.max_output_tokens = static_cast<int32_t>(row.max_output_tokens);
      n.spec.class_id = row.class_id;
      n.spec.tenant_id = row.tenant_id;
      n.spec.priority = row.priority;
      n.spec.cancel_after_tokens = static_cast<int32_t>(row.cancel_after_tokens);
      n.spec.cancel_after = Time::ns(row.cancel_after_ns);
      n.spec.adapter = static_cast<uint32_t>(std::max<int64_t>(row.adapter, 0));
      n.spec.adapter_given = row.adapter >= 0;
      n.spec.content_stream = row.session;
      n.earliest_ns = row.arrival_ns;
      n.think_ns = row.think_ns;
      n.key = rows.has_request_ids() ? row.key : number;
      n.line = row.line;
      m_parent_keys.push_back(row.parents);
      m_session_parent.push_back(k_none);
      if (row.session != 0) {
        auto [it, first] = last_turn.try_emplace(row.session, static_cast<Vertex>(m_nodes.size()));
        if (!first) {
          const Node& prev = m_nodes[it->second];
          const int64_t prompt =
              int64_t{prev.spec.prompt_tokens} + prev.spec.output_tokens + n.spec.prompt_tokens;
          if (prompt > k_max_tokens)
            throw InputError(fmt::format(
                "{}:{}: this turn's prompt (the session's context so far, {} tokens, plus "
                "prompt_tokens {}) is more than {} tokens",
                m_name, row.line, prompt - n.spec.prompt_tokens, n.spec.prompt_tokens,
                k_max_tokens));
          n.spec.prompt_tokens = static_cast<int32_t>(prompt);
          m_session_parent.back() = it->second;
          it->second = m_nodes.size();
        }
      }
      m_nodes.push_back(std::move(n));
    }
    if (m_nodes.empty()) {
      if (row_number > 0)
        throw InputError(fmt::format("{}: the trace has no requests left ({} {})", m_name,
                                     row_number, k_skipped_zero_tokens));
      throw InputError(fmt::format("{}: {}", m_name, rows.empty_trace()));
    }
  }

  void link(bool request_ids) {
    m_graph = Graph(m_nodes.size());
    std::unordered_map<uint64_t, Vertex> by_key;
    by_key.reserve(m_nodes.size());
    for (Vertex v = 0; v < m_nodes.size(); ++v) {
      auto [it, fresh] = by_key.try_emplace(m_nodes[v].key, v);
      if (!fresh)
        throw InputError(
            fmt::format("{}:{}: request_id {} is already the id of line {}: "
                        "request_id values must be unique",
                        m_name, m_nodes[v].line, m_nodes[v].key, m_nodes[it->second].line));
    }
    std::vector<Vertex> parents;
    for (Vertex v = 0; v < m_nodes.size(); ++v) {
      parents.clear();
      if (m_session_parent[v] != k_none) parents.push_back(m_session_parent[v]);
      for (uint64_t key : m_parent_keys[v]) {
        auto it = by_key.find(key);
        if (it == by_key.end())
          throw InputError(fmt::format(
              "{}:{}: column parent_id names {}, which is not {}{}", m_name, m_nodes[v].line, key,
              request_ids ? "the request_id of any row"
                          : "a row of this trace (without a request_id column, parents are "
                            "0-based row numbers)",
              m_counters.empty() || m_counters.front().second == 0
                  ? ""
                  : " (rows with 0 tokens were skipped)"));
        parents.push_back(it->second);
      }
      std::sort(parents.begin(), parents.end());
      parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
      for (Vertex p : parents) boost::add_edge(p, v, m_graph);
      m_nodes[v].pending = static_cast<uint32_t>(parents.size());
    }
    m_parent_keys = {};
    m_session_parent = {};
  }

  void check_acyclic() const {
    std::optional<Edge> closing;
    boost::depth_first_search(m_graph, boost::visitor(CycleFinder{{}, &closing}));
    if (!closing) return;
    const Node& parent = m_nodes[boost::source(*closing, m_graph)];
    const Node& child = m_nodes[boost::target(*closing, m_graph)];
    if (&parent == &child)
      throw InputError(fmt::format("{}:{}: request {} waits for itself (column parent_id)", m_name,
                                   child.line, child.key));
    throw InputError(fmt::format(
        "{}:{}: request {} waits for request {} (line {}), which itself waits, directly or "
        "through others, for request {}: the dependencies form a cycle",
        m_name, child.line, child.key, parent.key, parent.line, child.key));
  }

  static constexpr Vertex k_none = static_cast<Vertex>(-1);

  std::string m_name;
  std::vector<Node> m_nodes;  // by id (the order of the kept rows)
  Graph m_graph;
  std::vector<std::string> m_classes;
  std::vector<std::string> m_tenants;
  std::vector<std::vector<uint64_t>> m_parent_keys;  // while loading
  std::vector<Vertex> m_session_parent;              // while loading
  std::vector<Vertex> m_roots;                       // requests with no parent, by arrival
  size_t m_next_root = 0;
  size_t m_waiting = 0;
  std::vector<std::pair<std::string, int64_t>> m_counters;
};

}  // namespace

std::unique_ptr<WorkloadSource> make_dependent_trace(TraceRowReader& rows, const std::string& name,
                                                     const TraceOptions& options) {
  return std::make_unique<DependentTrace>(rows, name, options);
}

}  // namespace servesim
