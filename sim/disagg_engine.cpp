// The engine's side of prefill/decode disaggregation (docs/cluster.md#disaggregation): prefill
// replicas hand a request's KV to a decode replica over the cluster's links, and the decode
// replica admits it, decoding, once its KV memory can hold it. KvTransfers (sim/transfers.h)
// keeps the transfers' books; this file decides when they move.
#include <fmt/format.h>

#include "sim/simulation.h"
#include "sim/topology.h"

namespace servesim {

void Simulation::setup_pools() {
  m_stats.pools = m_c.pools;
  bool decode = false;
  for (uint32_t p = 0; p < m_c.pools.size(); ++p) {
    const PoolSpec& pool = m_c.pools[p];
    for (uint32_t i = pool.first_replica; i < pool.first_replica + pool.replicas; ++i) {
      Replica& r = m_reps.at(i);
      r.role = pool.role;
      r.pool = p;
      m_stats.replicas[i].pool = p;
      if (pool.role == PoolRole::Prefill) r.state.set_hold_kv_on_release(true);
      decode = decode || pool.role == PoolRole::Decode;
    }
  }
  if (!decode) return;
  if (!m_c.decode_router || !m_c.topology)
    throw std::logic_error(
        "a disaggregated cluster needs prefill pools, a decode router and links");
  std::vector<const KvManager*> kv;
  kv.reserve(m_reps.size());
  for (const Replica& r : m_reps) kv.push_back(&r.state.kv());  // stable: m_reps never grows
  m_transfers.emplace(m_c.pools, m_c.topology, std::move(kv));
  m_stats.kv_transfer.emplace();
  m_pick_loads.reserve(m_reps.size());
}

void Simulation::hand_off(uint32_t rep, uint32_t slot) {
  Replica& from = m_reps[rep];
  Request& r = from.state.req(slot);
  r.spec.output_tokens = from.output_tokens[slot];
  // The decode router's pick, or the first decode replica after it that can ever hold it.
  const uint32_t picked = pick(*m_c.decode_router, &m_transfers->decode(), r.spec);
  const uint32_t to = m_transfers->first_fitting(picked, r.spec);
  ++m_stats.replicas[rep].handed_off;
  m_transfers->start(m_now, rep, slot, to, r.spec, m_events);
}

void Simulation::on_delivered(uint32_t id) {
  const uint32_t dest = m_transfers->deliver(id, m_now);
  Replica& to = m_reps[dest];
  to.state.set_now(m_now);
  if (m_transfers->inbox(dest).size() == 1) admit_delivered(dest);
  if (!to.busy) schedule(dest);
}

void Simulation::admit_delivered(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  KvManager& kv = rep.state.kv();
  while (!m_transfers->inbox(rep_index).empty()) {
    // A seat as well as memory: vLLM's decode instance takes a request whose KV arrives from
    // its waiting queue, within max_num_seqs like any other.
    if (static_cast<int64_t>(rep.state.running().size()) >= rep.scheduler->max_running()) return;
    const KvTransfers::Transfer t = m_transfers->transfer(m_transfers->inbox(rep_index).front());
    Replica& from = m_reps[t.from];
    Request& src = from.state.req(t.slot);
    // Room for its context and the token its first decode step adds.
    const int64_t tokens = int64_t{src.spec.prompt_tokens} + 1;
    if (!kv.can_admit(m_transfers->probe(src.spec.prompt_tokens, src.spec.output_tokens), 0,
                      tokens))
      return;  // back-pressure: it waits, KV held there
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
    for (StepObserver* o : m_step_observers)  // the timeline's KV-transfer slices
      o->on_transfer({src.spec.id, t.from, rep_index, t.started, t.delivered, m_now});
    m_transfers->admitted(rep_index, m_now);
    // The prefill replica's memory is free again: it may admit more prefills.
    from.state.set_now(m_now);
    from.state.free_held_kv(t.slot);
    from.state.recycle(t.slot);
    if (!from.busy) schedule(t.from);
  }
}

}  // namespace servesim
