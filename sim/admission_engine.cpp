// The engine's side of admission and abandonment (sim/admission.h): the admission check at a
// replica, the timeouts' watches and the cancellations at a step's end.
#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"
#include "sim/simulation.h"

namespace servesim {

std::string Simulation::admission_refuses(uint32_t rep_index, uint32_t slot) {
  Replica& rep = m_reps[rep_index];
  Request& r = rep.state.req(slot);
  if (!m_admission->spec().tenant_rates.empty() && tenant_names().empty())
    throw InputError(
        "admission.rate_limit.tenants names tenants but the workload names none (a mix "
        "component's tenant, or a trace's tenant column)");
  m_admission->set_tenant_names(&tenant_names());
  m_admission->draw_cancel(r);
  EndCause cause = EndCause::None;
  std::string why = m_admission->refuse(r, rep.state, *rep.step_time, m_now, cause);
  r.end_cause = cause;
  return why;
}

void Simulation::watch_timeout(uint32_t rep, uint32_t slot) {
  const Request& r = m_reps[rep].state.req(slot);
  if (!m_admission) {  // a class's timeout or a trace's cancel_after_s without the sections
    if (r.spec.timeout == Time::ns(0) && r.spec.cancel_after == Time::ns(0)) return;
    m_admission.emplace(std::make_shared<const AdmissionSpec>(), m_c.seed);
  }
  const Time timeout = r.spec.timeout > Time::ns(0) ? r.spec.timeout : m_admission->spec().timeout;
  for (const bool cancel : {false, true}) {
    const Time after = cancel ? r.spec.cancel_after : timeout;
    if (after == Time::ns(0)) continue;
    const std::optional<Time> deadline = r.spec.arrival.plus_within(after);
    if (!deadline) continue;  // past the clock's end: it never comes
    m_admission->watch({*deadline, r.spec.id, rep, slot, cancel});
    post(Event::timer(std::max(*deadline, m_now), rep));  // a retried request's may be past
  }
}

namespace {

/// Whether the watch still names a request it applies to: one waiting for its first token (a
/// timeout), or one not done (a cancellation).
bool still_waiting(const BatchState& state, const AdmissionControl::Watch& w) {
  if (w.slot >= state.slots().size()) return false;
  const Request& r = state.slots()[w.slot];
  if (r.spec.id != w.id || (!w.cancel && r.first_token != Time::max())) return false;
  if (r.state != RequestState::Queued && r.state != RequestState::Running) return false;
  // A request swapped out to host memory keeps its place: the scheduler accounts for that
  // memory, so it is left to finish.
  return !state.swapped(w.slot);
}

/// Ends the watched request (still_waiting) as timed out or cancelled.
void abandon_watched(BatchState& state, const AdmissionControl::Watch& w, Time section_timeout) {
  const Request& r = state.req(w.slot);
  if (w.cancel) {
    state.abandon(
        w.slot, EndCause::Cancelled,
        fmt::format("cancelled by its client {:g} s after its arrival, with {} of {} "
                    "tokens (cancel_after_s)",
                    r.spec.cancel_after.seconds(), r.generated_tokens, r.spec.output_tokens));
    return;
  }
  const bool own = r.spec.timeout > Time::ns(0);
  state.abandon(w.slot, EndCause::TimedOut,
                fmt::format("timed out: no first token {:g} s after its arrival ({})",
                            (own ? r.spec.timeout : section_timeout).seconds(),
                            own ? "its class's timeout_s" : "abandonment.timeout_s"));
}

}  // namespace

void Simulation::expire_timeouts() {
  AdmissionControl::Watch w;
  while (m_admission->pop_due(m_now, w)) {
    Replica& rep = m_reps[w.rep];
    if (!still_waiting(rep.state, w)) continue;
    const auto& plan = rep.state.plan();
    if (rep.busy && std::any_of(plan.begin(), plan.end(),
                                [&](const StepEntry& e) { return e.slot == w.slot; })) {
      m_step_end_timeouts.push_back(w);  // the engine aborts it between steps
      continue;
    }
    rep.state.set_now(m_now);
    abandon_watched(rep.state, w, m_admission->spec().timeout);
    depart(w.rep, w.slot);
    if (!rep.busy) post_schedule(w.rep);
  }
}

void Simulation::timeouts_at_step_end(uint32_t rep_index) {
  BatchState& state = m_reps[rep_index].state;
  for (size_t i = 0; i < m_step_end_timeouts.size();) {
    const AdmissionControl::Watch w = m_step_end_timeouts[i];
    if (w.rep != rep_index) {
      ++i;
      continue;
    }
    m_step_end_timeouts.erase(m_step_end_timeouts.begin() + static_cast<std::ptrdiff_t>(i));
    if (!still_waiting(state, w)) continue;
    abandon_watched(state, w, m_admission->spec().timeout);
    depart(rep_index, w.slot);
  }
}

void Simulation::cancel_requests(uint32_t rep_index) {
  BatchState& state = m_reps[rep_index].state;
  for (uint32_t slot : m_cancelled) {
    const Request& r = state.req(slot);
    state.abandon(slot, EndCause::Cancelled,
                  fmt::format("cancelled by its client after {} of {} tokens", r.generated_tokens,
                              r.spec.output_tokens));
    depart(rep_index, slot);
  }
  m_cancelled.clear();
}

}  // namespace servesim
