#include "sim/transfers.h"

#include <stdexcept>

#include "sim/topology.h"

namespace servesim {

KvTransfers::KvTransfers(const std::vector<PoolSpec>& pools,
                         std::shared_ptr<const Topology> topology, std::vector<const KvManager*> kv)
    : m_pools(pools),
      m_topology(std::move(topology)),
      m_kv(std::move(kv)),
      m_links(m_topology->link_bytes_per_ns()),
      m_inbox(m_kv.size()),
      m_incoming(m_kv.size(), 0) {
  m_pool_of.resize(m_kv.size(), 0);
  for (uint32_t p = 0; p < m_pools.size(); ++p) {
    const PoolSpec& pool = m_pools[p];
    for (uint32_t i = pool.first_replica; i < pool.first_replica + pool.replicas; ++i) {
      m_pool_of.at(i) = p;
      if (pool.role == PoolRole::Prefill) m_entry.push_back(i);
      if (pool.role == PoolRole::Decode) m_decode.push_back(i);
    }
  }
  if (m_entry.empty() || m_decode.empty())
    throw std::logic_error("a disaggregated cluster needs prefill and decode pools");
}

const Request& KvTransfers::probe(int32_t prompt_tokens, int32_t output_tokens) {
  m_probe.spec.prompt_tokens = prompt_tokens;
  m_probe.spec.output_tokens = output_tokens;
  m_probe.prefill_target = prompt_tokens;
  return m_probe;
}

std::string KvTransfers::decode_never_fits(int32_t prompt_tokens, int32_t output_tokens) {
  const Request& r = probe(prompt_tokens, output_tokens);
  std::string why;
  for (uint32_t d : m_decode) {
    why = m_kv[d]->never_fits(r);
    if (why.empty()) return why;
  }
  return "no decode replica can ever hold it: " + why;
}

uint32_t KvTransfers::first_fitting(uint32_t picked, const RequestSpec& spec) {
  const Request& r = probe(spec.prompt_tokens, spec.output_tokens);
  size_t k = 0;
  while (m_decode[k] != picked) ++k;
  for (size_t n = 0; n < m_decode.size(); ++n, k = (k + 1) % m_decode.size())
    if (m_kv[m_decode[k]]->never_fits(r).empty()) break;
  return m_decode[k];
}

void KvTransfers::start(Time now, uint32_t from, uint32_t slot, uint32_t to,
                        const RequestSpec& spec, EventQueue& events) {
  uint32_t id = 0;
  if (m_free.empty()) {
    id = static_cast<uint32_t>(m_transfers.size());
    m_transfers.emplace_back();
  } else {
    id = m_free.back();
    m_free.pop_back();
  }
  m_transfers[id] = {from, slot, to, now, Time::max()};
  ++m_incoming[to];
  const double bytes =
      static_cast<double>(spec.prompt_tokens) * m_pools[m_pool_of[from]].kv_bytes_per_token;
  ++m_stats.transfers;
  m_stats.bytes += bytes;
  const auto nodes = static_cast<uint32_t>(m_pools.size());  // replica i is node pools + i
  const Topology::Path path = m_topology->path(nodes + from, nodes + to);
  m_links.start(now, path.links, bytes, path.latency_ns, id, m_deliveries);
  post_events(events);
}

void KvTransfers::post_events(EventQueue& events) {
  for (const LinkSharing::Delivery& d : m_deliveries)
    events.post(Event::delivered(d.at, d.payload));
  m_deliveries.clear();
  const Time next = m_links.next_send_end();
  if (next < m_link_tick_at) {
    m_link_tick_at = next;
    events.post(Event::link_tick(next));
  }
}

void KvTransfers::on_link_tick(Time now, EventQueue& events) {
  if (now == m_link_tick_at) m_link_tick_at = Time::max();
  m_links.advance(now, m_deliveries);  // idempotent: a stale tick changes nothing
  post_events(events);
}

uint32_t KvTransfers::deliver(uint32_t id, Time now) {
  Transfer& t = m_transfers[id];
  t.delivered = now;
  m_stats.transfer_s.add((t.delivered - t.started).seconds());
  m_inbox[t.to].push_back(id);
  return t.to;
}

void KvTransfers::admitted(uint32_t rep, Time now) {
  const uint32_t id = m_inbox[rep].front();
  m_inbox[rep].pop_front();
  --m_incoming[rep];
  m_stats.admit_wait_s.add((now - m_transfers[id].delivered).seconds());
  m_free.push_back(id);
}

}  // namespace servesim
