// The engine's side of prefill/decode disaggregation (docs/cluster.md#disaggregation): prefill
// replicas hand a request's KV to a decode replica over the cluster's links, and the decode
// replica admits it, decoding, once its KV memory can hold it.
#include <fmt/format.h>

#include "sim/simulation.h"
#include "sim/topology.h"

namespace servesim {

void Simulation::setup_pools() {
  m_stats.pools = m_c.pools;
  for (uint32_t p = 0; p < m_c.pools.size(); ++p) {
    const PoolSpec& pool = m_c.pools[p];
    for (uint32_t i = pool.first_replica; i < pool.first_replica + pool.replicas; ++i) {
      Replica& r = m_reps.at(i);
      r.role = pool.role;
      r.pool = p;
      m_stats.replicas[i].pool = p;
      if (pool.role == PoolRole::Prefill) {
        r.state.set_hold_kv_on_release(true);
        m_entry.push_back(i);
      } else if (pool.role == PoolRole::Decode) {
        m_decode.push_back(i);
      }
    }
  }
  if (m_decode.empty()) return;
  if (m_entry.empty() || !m_c.decode_router || !m_c.topology)
    throw std::logic_error(
        "a disaggregated cluster needs prefill pools, a decode router and links");
  m_links.emplace(m_c.topology->link_bytes_per_ns());
  m_stats.kv_transfer.emplace();
  m_pick_loads.reserve(m_reps.size());
}

std::string Simulation::decode_never_fits(int32_t prompt_tokens, int32_t output_tokens) {
  m_probe.spec.prompt_tokens = prompt_tokens;
  m_probe.spec.output_tokens = output_tokens;
  m_probe.prefill_target = prompt_tokens;
  std::string why;
  for (uint32_t d : m_decode) {
    why = m_reps[d].state.kv().never_fits(m_probe);
    if (why.empty()) return why;
  }
  return "no decode replica can ever hold it: " + why;
}

void Simulation::hand_off(uint32_t rep, uint32_t slot) {
  Replica& from = m_reps[rep];
  Request& r = from.state.req(slot);
  r.spec.output_tokens = from.output_tokens[slot];
  m_probe.spec.prompt_tokens = r.spec.prompt_tokens;
  m_probe.spec.output_tokens = r.spec.output_tokens;
  m_probe.prefill_target = r.spec.prompt_tokens;
  // The decode router's pick, or the first decode replica after it that can ever hold it.
  const uint32_t picked = pick(*m_c.decode_router, &m_decode, r.spec);
  size_t k = 0;
  while (m_decode[k] != picked) ++k;
  for (size_t n = 0; n < m_decode.size(); ++n, k = (k + 1) % m_decode.size())
    if (m_reps[m_decode[k]].state.kv().never_fits(m_probe).empty()) break;
  const uint32_t to = m_decode[k];
  uint32_t id = 0;
  if (m_free_transfers.empty()) {
    id = static_cast<uint32_t>(m_transfers.size());
    m_transfers.emplace_back();
  } else {
    id = m_free_transfers.back();
    m_free_transfers.pop_back();
  }
  m_transfers[id] = {rep, slot, to, m_now, Time::max()};
  ++m_reps[to].incoming;
  ++m_stats.replicas[rep].handed_off;
  const double bytes =
      static_cast<double>(r.spec.prompt_tokens) * m_c.pools[from.pool].kv_bytes_per_token;
  KvTransferStats& ks = *m_stats.kv_transfer;
  ++ks.transfers;
  ks.bytes += bytes;
  const auto nodes = static_cast<uint32_t>(m_c.pools.size());  // replica i is node pools + i
  const Topology::Path path = m_c.topology->path(nodes + rep, nodes + to);
  m_links->start(m_now, path.links, bytes, path.latency_ns, id, m_deliveries);
  post_deliveries();
}

void Simulation::post_deliveries() {
  for (const LinkSharing::Delivery& d : m_deliveries) post(d.at, Kind::Transfer, d.payload);
  m_deliveries.clear();
  const Time next = m_links->next_send_end();
  if (next < m_link_tick_at) {
    m_link_tick_at = next;
    post(next, Kind::Transfer, k_link_tick);
  }
}

void Simulation::on_transfer_event(uint32_t what) {
  if (what == k_link_tick) {
    if (m_now == m_link_tick_at) m_link_tick_at = Time::max();
    m_links->advance(m_now, m_deliveries);  // idempotent: a stale tick changes nothing
    post_deliveries();
    return;
  }
  Transfer& t = m_transfers[what];
  t.delivered = m_now;
  m_stats.kv_transfer->transfer_s.add((t.delivered - t.started).seconds());
  const uint32_t dest = t.to;
  Replica& to = m_reps[dest];
  to.inbox.push_back(what);
  to.state.set_now(m_now);
  if (to.inbox.size() == 1) admit_delivered(dest);
  if (!to.busy) schedule(dest);
}

void Simulation::admit_delivered(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  KvManager& kv = rep.state.kv();
  while (!rep.inbox.empty()) {
    // A seat as well as memory: vLLM's decode instance takes a request whose KV arrives from
    // its waiting queue, within max_num_seqs like any other.
    if (static_cast<int64_t>(rep.state.running().size()) >= rep.scheduler->max_running()) return;
    const uint32_t id = rep.inbox.front();
    const Transfer& t = m_transfers[id];
    Replica& from = m_reps[t.from];
    Request& src = from.state.req(t.slot);
    // Room for its context and the token its first decode step adds.
    const int64_t tokens = int64_t{src.spec.prompt_tokens} + 1;
    m_probe.spec.prompt_tokens = src.spec.prompt_tokens;
    m_probe.spec.output_tokens = src.spec.output_tokens;
    m_probe.prefill_target = src.spec.prompt_tokens;
    if (!kv.can_admit(m_probe, 0, tokens)) return;  // back-pressure: it waits, KV held there
    rep.inbox.pop_front();
    --rep.incoming;
    const uint32_t slot = rep.state.add_request(src.spec);
    Request& r = rep.state.req(slot);
    r.replica = rep_index;
    r.context_tokens = src.spec.prompt_tokens;
    r.prefill_target = src.spec.prompt_tokens;
    r.generated_tokens = src.generated_tokens;
    r.preemptions = src.preemptions;
    r.swap_preemptions = src.swap_preemptions;
    // What happened before the move stays the prefill replica's (per-replica summaries).
    r.prefill_replica = t.from;
    r.prefill_preemptions = src.preemptions;
    r.prefill_swap_preemptions = src.swap_preemptions;
    r.cached_prompt_tokens = src.cached_prompt_tokens;
    r.first_admitted = src.first_admitted;
    r.first_token = src.first_token;
    r.last_token = src.last_token;
    if (!kv.try_admit(r, 0, tokens))
      throw std::logic_error("a decode replica's KV refused what it said it could admit");
    rep.state.admit_prefilled(slot);
    ++m_stats.replicas[rep_index].received;
    m_stats.kv_transfer->admit_wait_s.add((m_now - t.delivered).seconds());
    // The prefill replica's memory is free again: it may admit more prefills.
    from.state.set_now(m_now);
    from.state.free_held_kv(t.slot);
    from.state.recycle(t.slot);
    m_free_transfers.push_back(id);
    if (!from.busy) schedule(t.from);
  }
}

}  // namespace servesim
