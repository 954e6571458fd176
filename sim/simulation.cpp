#include "sim/simulation.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

namespace servesim {

Simulation::Simulation(Components c, bool check, RunLimits limits)
    : m_c(std::move(c)),
      m_state(std::move(m_c.kv)),
      m_check(check),
      m_limits(limits) {
  m_stats.kv_capacity_tokens = m_state.kv().capacity_tokens();
  m_reactive = m_c.source->reactive();
  std::vector<Event> storage;
  storage.reserve(16);
  m_events = decltype(m_events)(std::greater<>(), std::move(storage));
}

void Simulation::post(Time t, Kind k) { m_events.push(Event{t, k, m_seq++}); }

void Simulation::schedule() {
  // The Schedule event only exists to come after every other event at this instant. When no
  // other is queued for now, planning at once is the same (and saves a queue round trip a step).
  if (!m_schedule_posted && (m_events.empty() || m_events.top().t > m_state.now())) {
    try_start_step();
    return;
  }
  post_schedule();
}

void Simulation::post_schedule() {
  if (m_schedule_posted) return;
  m_schedule_posted = true;
  post(m_state.now(), Kind::Schedule);
}

namespace {

/// Orders the ready heap: std::push_heap keeps the greatest on top, so "greater" = later.
bool later(const RequestSpec& a, const RequestSpec& b) {
  return a.arrival != b.arrival ? a.arrival > b.arrival : a.id > b.id;
}

}  // namespace

void Simulation::pull_next_arrival() {
  m_next_posted = m_c.source->next(m_next);
  if (m_next_posted) {
    if (m_next.arrival < m_state.now())
      throw std::logic_error("workload source yielded arrivals out of order");
    post(m_next.arrival, Kind::Arrival);
  }
  update_arrivals_done();
}

void Simulation::update_arrivals_done() {
  m_state.set_arrivals_done(!m_next_posted && m_ready.empty());
}

RequestSpec& Simulation::due_arrival() {
  if (m_ready.empty() || (m_next_posted && !later(m_next, m_ready.front()))) return m_next;
  std::pop_heap(m_ready.begin(), m_ready.end(), later);
  return m_ready.back();
}

const char* Simulation::stop_reason(Time t, uint64_t events) {
  if (t > m_limits.max_sim_time) return "simulated time limit";
  if (m_limits.interrupt && *m_limits.interrupt) return "interrupted";
  if (m_limits.max_wall_s > 0 && events % 1024 == 0) {
    static_assert(std::chrono::steady_clock::is_steady);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - m_wall_start).count() >
        m_limits.max_wall_s)
      return "wall time limit";
  }
  return nullptr;
}

void Simulation::run() {
  m_wall_start = std::chrono::steady_clock::now();
  run_events();
  m_stats.prefix = m_state.kv().prefix_stats();
  m_stats.workload_counters = m_c.source->counters();
}

void Simulation::run_events() {
  pull_next_arrival();
  uint64_t events = 0;
  while (!m_events.empty()) {
    const Event e = m_events.top();
    if (const char* why = stop_reason(e.t, ++events)) {
      m_stats.stopped_by = why;
      record_unfinished();  // partial: what is in flight stays unfinished
      return;
    }
    m_events.pop();
    if (m_check && e.t < m_state.now())
      throw InvariantError(fmt::format("time went backwards: event at {} ns after {} ns",
                                       e.t.count_ns(), m_state.now().count_ns()));
    m_state.set_now(e.t);
    m_stats.end = e.t;
    switch (e.kind) {
      case Kind::StepEnd:
        finish_step();
        schedule();
        break;
      case Kind::Arrival:
        on_arrival();
        if (!m_busy) schedule();
        break;
      case Kind::Timer:
        if (e.t == m_timer_at) m_timer_at = Time::max();
        if (!m_busy) post_schedule();
        break;
      case Kind::Schedule:
        m_schedule_posted = false;
        if (!m_busy) try_start_step();
        break;
    }
  }
  check_all_served();
}

void Simulation::on_arrival() {
  RequestSpec& spec = due_arrival();
  const bool from_source = &spec == &m_next;
  const uint32_t slot = m_state.add_request(spec);
  if (!from_source) m_ready.pop_back();
  const Request& r = m_state.req(slot);
  std::string why = m_state.kv().never_fits(r);
  if (why.empty()) why = m_c.scheduler->never_schedulable(r);
  if (why.empty()) {
    m_state.enqueue(slot);
    m_stats.peak_in_flight =
        std::max(m_stats.peak_in_flight, static_cast<int64_t>(m_state.live()));
  } else {
    m_state.reject(slot, std::move(why));
    depart(slot);
  }
  if (from_source)
    pull_next_arrival();
  else
    update_arrivals_done();
}

void Simulation::depart(uint32_t slot) {
  const Request& r = m_state.req(slot);
  for (RequestRecorder* rec : m_recorders) rec->record(r);
  if (m_reactive && !m_stopping) {
    m_c.source->on_depart(r, m_state.now(), m_newly_ready);
    for (RequestSpec& spec : m_newly_ready) {
      if (spec.arrival < m_state.now())
        throw std::logic_error("workload source made a request ready in the past");
      post(spec.arrival, Kind::Arrival);
      m_ready.push_back(std::move(spec));
      std::push_heap(m_ready.begin(), m_ready.end(), later);
    }
    if (!m_newly_ready.empty()) {
      m_newly_ready.clear();
      update_arrivals_done();
    }
  }
  m_state.recycle(slot);
}

void Simulation::record_unfinished() {
  m_stopping = true;  // what is left is recorded, not continued
  // Slot order is arbitrary; recorders that care about order sort by id.
  for (uint32_t slot = 0; slot < m_state.slots().size(); ++slot)
    if (m_state.req(slot).state != RequestState::Pending) depart(slot);
}

void Simulation::try_start_step() {
  m_c.scheduler->plan_step(m_state);
  const Time wake = m_state.take_wake();
  const auto& plan = m_state.plan();
  if (plan.empty()) {
    if (wake != Time::max() && wake > m_state.now() && wake < m_timer_at) {
      m_timer_at = wake;
      post(wake, Kind::Timer);
    }
    return;
  }
  StepShape shape;
  const std::vector<Request>& reqs = m_state.slots();
  for (const StepEntry& e : plan) {
    const Request& r = reqs[e.slot];
    switch (e.kind) {
      case EntryKind::Prefill:
        shape.prefill_tokens += e.prefill_tokens;
        shape.prefill_tokens_sq += static_cast<double>(e.prefill_tokens) * e.prefill_tokens;
        shape.prefill_context_tokens += r.context_tokens;
        break;
      case EntryKind::Decode:
        ++shape.decode_sequences;
        shape.decode_context_tokens += r.context_tokens + 1;
        break;
      case EntryKind::Padding:
        ++shape.decode_sequences;
        shape.decode_context_tokens += r.context_tokens;
        break;
    }
  }
  shape.sequences = static_cast<int32_t>(plan.size());
  // A step always takes time, so simulated time always advances between steps.
  const std::optional<StepCost> cost = m_c.step_time->cost(shape);
  const double step_ms = cost ? cost->step_ms : m_c.step_time->step_ms(shape);
  const Time duration = std::max(Time::from_ms(step_ms), Time::ns(1));
  ++m_stats.steps;
  m_stats.busy_ns += duration.count_ns();
  m_stats.seat_steps += shape.sequences;
  m_stats.prefill_tokens += shape.prefill_tokens;
  m_stats.peak_kv_used_tokens = std::max(m_stats.peak_kv_used_tokens, m_state.kv().used_tokens());
  if (cost) {
    ++m_stats.costed_steps;
    m_stats.bandwidth_bound_steps += cost->bandwidth_bound;
    m_stats.bytes_moved += cost->bytes;
    m_stats.flops += cost->flops;
    m_stats.peak_bytes_per_s = cost->peak_bytes_per_s;
    m_stats.peak_flops_per_s = cost->peak_flops_per_s;
  }
  m_busy = true;
  post(m_state.now() + duration, Kind::StepEnd);
  if (m_check) check_invariants("after planning");
}

void Simulation::finish_step() {
  const Time now = m_state.now();
  int32_t finished = 0;
  int64_t decoded = 0;
  std::vector<Request>& reqs = m_state.mutable_slots();
  for (const StepEntry& e : m_state.plan()) {
    Request& r = reqs[e.slot];
    if (e.kind == EntryKind::Decode) {
      r.context_tokens += 1;
      ++decoded;
    } else if (e.kind == EntryKind::Prefill) {
      r.context_tokens += e.prefill_tokens;
      if (r.context_tokens != r.prefill_target) continue;  // more chunks to come
    } else {
      continue;  // padding produces nothing
    }
    ++r.generated_tokens;
    if (r.first_token == Time::max()) r.first_token = now;
    r.last_token = now;
    if (r.done()) {
      r.state = RequestState::Finished;
      r.finish = now;
      ++finished;
    }
  }
  m_stats.decode_tokens += decoded;
  m_state.set_finished_this_step(finished);
  m_c.scheduler->after_step(m_state);
  for (uint32_t slot : m_state.departed()) depart(slot);
  m_state.departed().clear();
  m_state.plan().clear();
  m_busy = false;
  if (m_check) check_invariants("after the step");
}

void Simulation::check_invariants(const char* when) {
  const auto& reqs = m_state.slots();
  auto fail = [&](const Request* r, const std::string& what) {
    throw InvariantError(fmt::format(
        "invariant broken {} step {} at {} ns{}: {}", when, m_stats.steps,
        m_state.now().count_ns(),
        r ? fmt::format(" (request {}: state {}, context {}, {} of {} tokens, KV held {})",
                        r->spec.id, static_cast<int>(r->state), r->context_tokens,
                        r->generated_tokens, r->spec.output_tokens, r->kv_held_tokens)
          : std::string(),
        what));
  };
  const KvManager& kv = m_state.kv();
  if (kv.used_tokens() > kv.capacity_tokens())
    fail(nullptr, fmt::format("KV use {} exceeds capacity {}", kv.used_tokens(), kv.capacity_tokens()));
  m_seen.assign(reqs.size(), 0);
  int64_t held = 0;
  for (uint32_t slot : m_state.running()) {
    const Request& r = reqs[slot];
    if (m_seen[slot]++) fail(&r, "listed twice in the running batch");
    if (r.state != RequestState::Running && r.state != RequestState::Finished)
      fail(&r, "in the running batch but not running");
    if (r.generated_tokens > r.spec.output_tokens) fail(&r, "produced more tokens than asked");
    held += r.kv_held_tokens;
  }
  for (uint32_t slot : m_state.waiting()) {
    const Request& r = reqs[slot];
    if (m_seen[slot]++) fail(&r, "both queued and running, or queued twice");
    if (r.state != RequestState::Queued) fail(&r, "in the queue but not queued");
    if (r.kv_held_tokens != 0) fail(&r, "queued while holding KV");
  }
  // With a prefix cache, requests share blocks: what they hold together covers what is used.
  if (kv.prefix_stats() ? held < kv.used_tokens() : held != kv.used_tokens())
    fail(nullptr, fmt::format("KV use {} differs from the {} tokens the running requests hold",
                              kv.used_tokens(), held));
}

void Simulation::check_all_served() const {
  if (m_c.source->waiting() != 0)
    throw std::logic_error(fmt::format(
        "simulation ended with {} requests still waiting for others to leave",
        m_c.source->waiting()));
  for (const Request& r : m_state.slots()) {
    if (r.state == RequestState::Pending) continue;  // a free slot
    throw std::logic_error(fmt::format(
        "simulation ended with request {} unserved (state {}, {} of {} tokens generated): "
        "the scheduler stopped planning steps",
        r.spec.id, static_cast<int>(r.state), r.generated_tokens, r.spec.output_tokens));
  }
}

}  // namespace servesim
