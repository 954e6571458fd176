// The engine's side of replica failures (sim/failures.h, docs/failures.md): a replica going
// down and coming back, its requests retried or failed, and the requests waiting at the router
// while every replica is down.
#include <fmt/format.h>

#include <algorithm>

#include "sim/simulation.h"

namespace servesim {

void Simulation::setup_failures() {
  m_failures.emplace(m_c.failures, static_cast<uint32_t>(m_reps.size()), m_c.seed);
  for (uint32_t i = 0; i < m_reps.size(); ++i) {
    set_routable(i, true);
    if (m_failures->next(i) != Time::max()) post(Event::timer(m_failures->next(i), i));
  }
}

bool Simulation::idle_failure_event(const Event& e) const {
  // A failure or recovery after the last request left changes nothing: it is dropped, so the
  // run still ends with its last request (the drawn failures would otherwise go on forever).
  return m_failures->next(e.replica()) == e.time() && !work_left();
}

void Simulation::on_failure_timer(uint32_t rep) {
  if (m_failures->advance(rep, m_now))
    fail_replica(rep);
  else
    recover_replica(rep);
  if (m_failures->next(rep) != Time::max()) post(Event::timer(m_failures->next(rep), rep));
}

void Simulation::fail_replica(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  FailureStats& st = m_failures->stats;
  BatchState& state = rep.state;
  state.set_now(m_now);
  set_routable(rep_index, false);
  rep.down = true;
  if (rep.busy) {  // its step is lost: the time it had left is not busy time
    rep.stale_step = true;
    ++st.lost_steps;
    m_stats.replicas[rep_index].busy_ns -= (rep.step_end - m_now).count_ns();
  }
  // Every request it holds, in arrival order: retried elsewhere or failed.
  m_failed_slots.clear();
  for (uint32_t slot = 0; slot < state.slots().size(); ++slot) {
    const RequestState s = state.slots()[slot].state;
    if (s == RequestState::Queued || s == RequestState::Running) m_failed_slots.push_back(slot);
  }
  std::sort(m_failed_slots.begin(), m_failed_slots.end(), [&](uint32_t a, uint32_t b) {
    const RequestSpec& x = state.slots()[a].spec;
    const RequestSpec& y = state.slots()[b].spec;
    return x.arrival != y.arrival ? x.arrival < y.arrival : x.id < y.id;
  });
  const FailureSpec& spec = m_failures->spec();
  m_retried.clear();
  for (uint32_t slot : m_failed_slots) {
    Request& r = state.req(slot);
    st.lost_tokens += r.context_tokens;
    const bool retry = spec.retry && r.spec.retries < spec.max_retries;
    if (retry) m_retried.push_back(r.spec);
    state.abandon(slot, EndCause::Failed,
                  spec.retry ? fmt::format("its replica {} failed after {} retries (max_retries)",
                                           rep_index, r.spec.retries)
                             : fmt::format("its replica {} failed (on_failure: fail)", rep_index));
    if (retry) {
      state.recycle(slot);  // not recorded: it starts over elsewhere
    } else {
      ++st.failed_requests;
      depart(rep_index, slot);
    }
  }
  state.plan().clear();
  state.kv().drop_cache();
  if (m_check) check_invariants(rep_index, "after a failure");
  for (RequestSpec& s : m_retried) {
    ++s.retries;
    ++st.retries;
    place(s);
  }
  update_arrivals_done();
}

void Simulation::recover_replica(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  rep.down = false;
  set_routable(rep_index, true);
  std::deque<RequestSpec>& waiting = m_failures->waiting;
  while (!waiting.empty()) {
    const RequestSpec spec = std::move(waiting.front());
    waiting.pop_front();
    place(spec);
  }
  update_arrivals_done();
  if (!rep.busy) post_schedule(rep_index);
}

void Simulation::end_stale_step(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  rep.stale_step = false;
  rep.busy = false;
  rep.state.plan().clear();
  if (!rep.down) schedule(rep_index);
}

bool Simulation::hold_at_router(const RequestSpec& spec) {
  if (!m_failures || any_routable()) return false;
  if (m_failures->spec().retry) {
    m_failures->waiting.push_back(spec);
    ++m_failures->stats.waited_requests;
    return true;
  }
  // on_failure: fail. It is recorded through replica 0's slots, which it never joins.
  BatchState& state = m_reps[0].state;
  state.set_now(m_now);
  const uint32_t slot = state.add_request(spec);
  Request& r = state.req(slot);
  r.replica = 0;
  state.reject(slot, "every replica was down at its arrival (on_failure: fail)");
  r.end_cause = EndCause::Failed;
  ++m_failures->stats.failed_requests;
  depart(0, slot);
  return true;
}

void Simulation::place(const RequestSpec& spec) {
  if (hold_at_router(spec)) return;
  const uint32_t rep = route(spec);
  admit(rep, spec);
  if (!m_reps[rep].busy) post_schedule(rep);
}

void Simulation::record_waiting_unfinished() {
  if (!m_failures) return;
  for (const RequestSpec& spec : m_failures->waiting) {
    const uint32_t slot = m_reps[0].state.add_request(spec);
    m_reps[0].state.req(slot).state = RequestState::Queued;  // arrived, never served
    depart(0, slot);
  }
  m_failures->waiting.clear();
}

void Simulation::finish_failure_stats() {
  FailureStats st = m_failures->stats;
  for (uint32_t i = 0; i < m_reps.size(); ++i) {
    const double down = m_failures->downtime_s(i, m_stats.end);
    m_stats.replicas[i].down_s = down;
    st.downtime_s += down;
  }
  st.replica_time_s = static_cast<double>(m_reps.size()) * m_stats.end.seconds();
  st.availability = st.replica_time_s > 0 ? 1.0 - st.downtime_s / st.replica_time_s : 1.0;
  m_stats.failures = st;
}

}  // namespace servesim
