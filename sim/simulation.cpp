#include "sim/simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "sim/api_latency.h"
#include "sim/step_launch.h"

namespace servesim {

Simulation::Simulation(Components c, bool check, RunLimits limits)
    : m_c(std::move(c)), m_check(check), m_limits(limits) {
  if (m_c.replicas.empty()) throw std::logic_error("an engine needs at least one replica");
  m_reps.reserve(m_c.replicas.size());
  for (ReplicaParts& p : m_c.replicas) m_reps.emplace_back(std::move(p));
  m_c.replicas.clear();
  if (m_reps.size() > 1 && !m_c.router)
    throw std::logic_error("a cluster of several replicas needs a router");
  m_stats.replicas.resize(m_reps.size());
  for (size_t i = 0; i < m_reps.size(); ++i) {
    m_stats.replicas[i].kv_capacity_tokens = m_reps[i].state.kv().capacity_tokens();
    m_stats.kv_capacity_tokens += m_stats.replicas[i].kv_capacity_tokens;
    m_reps[i].state.set_priority_order(m_reps[i].scheduler->priority_order());
  }
  m_loads.resize(m_reps.size());
  if (!m_c.pools.empty()) setup_pools();
  m_reactive = m_c.source->reactive();
  if (m_c.speculative) m_spec.emplace(m_c.speculative, m_c.seed);
  if (m_c.admission) m_admission.emplace(m_c.admission, m_c.seed);
  if (m_c.lora) {
    m_lora.emplace(m_c.lora, m_reps.size());
    for (Replica& r : m_reps) r.state.set_max_loras(m_c.lora->max_loras);
  }
  m_events.reserve(16 * m_reps.size());
  if (m_c.autoscale) setup_autoscale();
  if (m_c.failures) setup_failures();
  setup_pipelines();
  setup_streaks();
}

void Simulation::schedule(uint32_t rep) {
  // The Schedule event only exists to come after every other event at this instant. When no
  // other is queued for now, planning at once is the same (and saves a queue round trip a step).
  if (!m_reps[rep].schedule_posted && (m_events.empty() || m_events.top().time() > m_now)) {
    try_start_step(rep);
    return;
  }
  post_schedule(rep);
}

void Simulation::post_schedule(uint32_t rep) {
  if (m_reps[rep].schedule_posted) return;
  m_reps[rep].schedule_posted = true;
  post(Event::schedule(m_now, rep));
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
    if (m_next.arrival < m_now)
      throw std::logic_error("workload source yielded arrivals out of order");
    post(Event::arrival(m_next.arrival));
    // With an arrival to come none is done: update_arrivals_done's only effect then, without
    // its call and its test of the other queues (about 20 instructions a request).
    for (Replica& r : m_reps) r.state.set_arrivals_done(false);
    return;
  }
  update_arrivals_done();
}

bool Simulation::work_left() const {
  if (m_next_posted || !m_ready.empty() || !m_routing.empty()) return true;
  if (m_failures && !m_failures->waiting.empty()) return true;
  return std::any_of(m_reps.begin(), m_reps.end(),
                     [](const Replica& r) { return r.state.live() > 0; });
}

void Simulation::update_arrivals_done() {
  const bool done = !m_next_posted && m_ready.empty() && m_routing.empty() &&
                    (!m_failures || m_failures->waiting.empty());
  for (uint32_t i = 0; i < m_reps.size(); ++i) {
    Replica& r = m_reps[i];
    // A replica idle with requests waiting (a static batcher's partial batch) must hear that
    // none is to come, not only the replica the last request went to.
    if (done && !r.state.arrivals_done() && !r.busy && !r.state.waiting().empty()) post_schedule(i);
    r.state.set_arrivals_done(done);
  }
}

RequestSpec& Simulation::due_arrival() {
  if (m_ready.empty() || (m_next_posted && !later(m_next, m_ready.front()))) return m_next;
  std::pop_heap(m_ready.begin(), m_ready.end(), later);
  return m_ready.back();
}

const char* Simulation::stop_reason(Time t, uint64_t events) {
  if (t > m_limits.max_sim_time) return "simulated time limit";
  if (m_stats.peak_in_flight > m_limits.max_queued) return "queue limit";
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
  for (StepObserver* o : m_step_observers)
    o->on_start(static_cast<uint32_t>(m_reps.size()), m_c.pools);
  run_events();
  finish_stats();
}

void Simulation::finish_stats() {
  materialize_streaks();
  for (const Replica& r : m_reps) {
    // A decode replica's admissions are KV arriving from a prefill, not prefills to look up.
    const auto p = r.role == PoolRole::Decode ? std::nullopt : r.state.kv().prefix_stats();
    if (!p) continue;
    if (!m_stats.prefix) m_stats.prefix.emplace();
    m_stats.prefix->queried_tokens += p->queried_tokens;
    m_stats.prefix->hit_tokens += p->hit_tokens;
    m_stats.prefix->queried_blocks += p->queried_blocks;
    m_stats.prefix->hit_blocks += p->hit_blocks;
    m_stats.prefix->evicted_blocks += p->evicted_blocks;
  }
  std::vector<const TierStore*> seen_tiers;
  for (const Replica& r : m_reps)
    if (const KvTiers* t = r.state.kv().offload())
      add_offload_stats(m_stats.offload, *t, seen_tiers);
  for (const ReplicaStats& r : m_stats.replicas) {
    m_stats.steps += r.steps;
    m_stats.busy_ns += r.busy_ns;
    m_stats.seat_steps += r.seat_steps;
    m_stats.peak_kv_used_tokens += r.peak_kv_used_tokens;
    m_stats.costed_steps += r.costed_steps;
    m_stats.bandwidth_bound_steps += r.bandwidth_bound_steps;
    m_stats.bytes_moved += r.bytes_moved;
    m_stats.flops += r.flops;
  }
  if (m_transfers) m_stats.kv_transfer = m_transfers->stats();
  m_stats.workload_counters = m_c.source->counters();
  m_stats.class_names = m_c.source->class_names();
  if (m_spec) m_stats.speculative = m_spec->stats();
  if (m_lora) {
    for (const Replica& r : m_reps) m_lora->add_skips(r.state.adapter_skips());
    m_stats.lora = m_lora->stats();
  }
  m_stats.tenant_names = m_c.source->tenant_names();
  if (m_autoscale) m_stats.autoscale = m_autoscale->finish(m_stats.end);
  if (m_failures) finish_failure_stats();
}

void Simulation::run_events() {
  pull_next_arrival();
  uint64_t events = 0;
  while (!m_events.empty()) {
    const Event e = m_events.top();
    if (const char* why = stop_reason(e.time(), ++events)) {
      // With every request served and none to come, what is left are wake-ups nothing waits
      // for (a dynamic batcher's timer for a batch already dispatched): the run is complete.
      if (!work_left()) return;
      m_stats.stopped_by = why;
      record_unfinished();  // partial: what is in flight stays unfinished
      return;
    }
    m_events.pop();
    dispatch(e);
  }
  check_all_served();
}

void Simulation::dispatch(const Event& e) {
  if (m_check && e.time() < m_now)
    throw InvariantError(fmt::format("time went backwards: event at {} ns after {} ns",
                                     e.time().count_ns(), m_now.count_ns()));
  if (m_failures && e.kind() == EventKind::Timer && idle_failure_event(e)) return;
  // A decode streak keeps its requests' state implicit (sim/decode_streak.h): an event that
  // may read or change them has it written back first. A step end, an arrival (which reads
  // only the new request and the replicas' counts) and a planning do not.
  if (m_active_streaks > 0 && e.kind() != EventKind::StepEnd && e.kind() != EventKind::Arrival &&
      e.kind() != EventKind::Routed && e.kind() != EventKind::Schedule)
    materialize_streaks();
  m_now = e.time();
  // An autoscaler's decisions and provisioning go on past the last request: they are not the
  // run's end.
  if (e.kind() != EventKind::Autoscale) m_stats.end = e.time();
  switch (e.kind()) {
    case EventKind::StepEnd: {
      const uint32_t rep = e.replica();
      if (m_reps[rep].stale_step) {  // its replica failed during it
        end_stale_step(rep);
        break;
      }
      m_reps[rep].state.set_now(m_now);
      if (!m_pipes.empty()) {  // micro-batches: the oldest batch left the last stage
        pipeline_step_end(rep);
        break;
      }
      finish_step(rep);
      if (m_autoscale) park_if_drained(rep);
      schedule(rep);
      break;
    }
    case EventKind::Autoscale:
      on_autoscale(e.autoscale_target());
      break;
    case EventKind::LinkTick:
      m_transfers->on_link_tick(m_now, m_events);
      break;
    case EventKind::Delivered:
      on_delivered(e.transfer());
      break;
    case EventKind::Arrival:
      on_arrival();
      break;
    case EventKind::Routed:
      on_routed();
      break;
    case EventKind::Timer: {
      Replica& rep = m_reps[e.replica()];
      rep.state.set_now(m_now);
      if (m_now == rep.timer_at) rep.timer_at = Time::max();
      if (m_failures && m_failures->next(e.replica()) == m_now) on_failure_timer(e.replica());
      if (m_admission) expire_timeouts();
      if (!m_pipes.empty()) pipeline_refresh(e.replica());  // stage 0 may have freed
      if (!rep.busy) post_schedule(e.replica());
      break;
    }
    case EventKind::Schedule: {
      Replica& rep = m_reps[e.replica()];
      rep.state.set_now(m_now);
      rep.schedule_posted = false;
      if (!rep.busy) try_start_step(e.replica());
      break;
    }
  }
}

void Simulation::on_arrival() {
  RequestSpec& due = due_arrival();
  const bool from_source = &due == &m_next;
  // A request made ready by another's departure leaves the ready heap first: admitting it may
  // reject it, and its own departure may push its dependants onto the heap.
  if (!from_source) {
    m_arriving = std::move(due);
    m_ready.pop_back();
  }
  RequestSpec& spec = from_source ? m_next : m_arriving;
  std::optional<uint32_t> rep;  // the replica it joined, when routed at once
  if (m_c.router_delay > Time::ns(0)) {
    m_routing.push_back(std::move(spec));
    post(Event::routed(m_now + m_c.router_delay));
  } else if (!m_failures || !hold_at_router(spec)) {  // the call only where it may hold
    rep = route(spec);
    admit(*rep, spec);
  }
  // The next arrival is posted before planning, so that one at this same instant is seen first.
  if (from_source)
    pull_next_arrival();
  else
    update_arrivals_done();
  if (rep && !m_reps[*rep].busy) schedule(*rep);
}

void Simulation::on_routed() {
  const RequestSpec spec = std::move(m_routing.front());
  m_routing.pop_front();
  if (hold_at_router(spec)) {
    update_arrivals_done();
    return;
  }
  const uint32_t rep = route(spec);
  admit(rep, spec);
  update_arrivals_done();
  if (!m_reps[rep].busy) schedule(rep);
}

void Simulation::refresh_loads() {
  for (size_t i = 0; i < m_reps.size(); ++i) {
    const BatchState& st = m_reps[i].state;
    m_loads[i] = {static_cast<int64_t>(st.waiting().size() + st.running().size()) +
                      (m_transfers ? m_transfers->incoming(static_cast<uint32_t>(i)) : 0),
                  st.kv().used_tokens(), st.kv().capacity_tokens()};
  }
  m_loads_at = m_now;
}

uint32_t Simulation::route(const RequestSpec& spec) {
  if (m_reps.size() == 1) return 0;
  return pick(*m_c.router, m_transfers ? &m_transfers->entry() : nullptr, spec);
}

uint32_t Simulation::pick(Router& router, const std::vector<uint32_t>* members,
                          const RequestSpec& spec) {
  const bool refresh = m_c.load_refresh == Time::ns(0) || m_loads_at == Time::max() ||
                       m_now - m_loads_at >= m_c.load_refresh;
  if (refresh) refresh_loads();
  if (!m_routable.empty()) {
    m_routable_members.clear();
    if (members) {
      for (uint32_t i : *members)
        if (m_routable[i]) m_routable_members.push_back(i);
    } else {
      for (uint32_t i = 0; i < m_routable.size(); ++i)
        if (m_routable[i]) m_routable_members.push_back(i);
    }
    if (m_routable_members.empty())
      throw std::logic_error("no routable replica to pick: the caller checks any_routable()");
    members = &m_routable_members;
  }
  if (m_lora)  // live, even on a stale snapshot: where the adapter is now
    for (uint32_t i = 0; i < m_loads.size(); ++i)
      m_loads[i].adapter_residency = m_lora->residency(i, spec.adapter);
  std::span<const ReplicaLoad> loads = m_loads;
  if (members) {
    m_pick_loads.clear();
    for (uint32_t i : *members) m_pick_loads.push_back(m_loads[i]);
    loads = m_pick_loads;
  }
  const uint32_t k = router.route(spec, loads);
  if (k >= loads.size()) throw std::logic_error("router picked a replica that does not exist");
  const uint32_t rep = members ? (*members)[k] : k;
  // A snapshot still counts the router's own decisions, as a real router's does: this one too,
  // so a refresh at this instant does not forget the request it is about to route (with live
  // loads the next pick reads them afresh anyway).
  ++m_loads[rep].outstanding;
  return rep;
}

void Simulation::set_routable(uint32_t rep, bool routable) {
  if (m_routable.empty()) m_routable.assign(m_reps.size(), 1);
  m_routable.at(rep) = routable ? 1 : 0;
}

bool Simulation::any_routable() const {
  return m_routable.empty() ||
         std::find(m_routable.begin(), m_routable.end(), 1) != m_routable.end();
}

void Simulation::admit(uint32_t rep_index, const RequestSpec& spec) {
  Replica& rep = m_reps[rep_index];
  rep.state.set_now(m_now);
  ++m_stats.replicas[rep_index].routed;
  if (m_lora) m_lora->note_request(spec);
  const uint32_t slot = rep.state.add_request(spec);
  Request& r = rep.state.req(slot);
  r.replica = rep_index;
  if (rep.role == PoolRole::Prefill) {  // it runs here for its first token only
    if (slot >= rep.output_tokens.size()) rep.output_tokens.resize(slot + 1);
    rep.output_tokens[slot] = r.spec.output_tokens;
    r.spec.output_tokens = 1;
  }
  std::string why = rep.state.kv().never_fits(r);
  // The scheduler's reason is moved over the empty one only when it has one (assigning an
  // empty string and destroying the temporary cost about 20 instructions a request).
  if (why.empty())
    if (std::string s = rep.scheduler->never_schedulable(r); !s.empty()) why = std::move(s);
  if (why.empty() && rep.role == PoolRole::Prefill)
    why = m_transfers->decode_never_fits(r.spec.prompt_tokens, rep.output_tokens[slot]);
  if (why.empty() && m_admission) why = admission_refuses(rep_index, slot);
  if (why.empty()) {
    if (rep.state.priority_order()) r.order_key = rep.scheduler->queue_key(r);
    rep.state.enqueue(slot);
    int64_t live = 0;
    for (const Replica& x : m_reps) live += static_cast<int64_t>(x.state.live());
    m_stats.peak_in_flight = std::max(m_stats.peak_in_flight, live);
    // The sections', or the request's own. Without the sections and a timeout or a cancel point
    // of its own (most runs) there is nothing to watch: watch_timeout's own first test, made
    // here without the call (about 30 instructions a request).
    if (m_admission || r.spec.timeout != Time::ns(0) || r.spec.cancel_after != Time::ns(0))
      watch_timeout(rep_index, slot);
  } else {
    rep.state.reject(slot, std::move(why));
    depart(rep_index, slot);
  }
}

void Simulation::depart(uint32_t rep, uint32_t slot) {
  BatchState& state = m_reps[rep].state;
  Request& r = state.req(slot);
  if (m_reps[rep].role == PoolRole::Prefill) r.spec.output_tokens = m_reps[rep].output_tokens[slot];
  to_client_view(r);  // the api section's time outside the engine (sim/api_latency.h)
  if (m_autoscale) m_autoscale->note_departure(r);
  for (RequestRecorder* rec : m_recorders) rec->record(r);
  if (m_reactive && !m_stopping) {
    m_c.source->on_depart(r, m_now, m_newly_ready);
    for (RequestSpec& spec : m_newly_ready) {
      if (spec.arrival < m_now)
        throw std::logic_error("workload source made a request ready in the past");
      post(Event::arrival(spec.arrival));
      m_ready.push_back(std::move(spec));
      std::push_heap(m_ready.begin(), m_ready.end(), later);
    }
    if (!m_newly_ready.empty()) {
      m_newly_ready.clear();
      update_arrivals_done();
    }
  }
  state.recycle(slot);
}

void Simulation::record_unfinished() {
  m_stopping = true;  // what is left is recorded, not continued
  materialize_streaks();
  record_waiting_unfinished();
  // Slot order is arbitrary; recorders that care about order sort by id.
  for (uint32_t rep = 0; rep < m_reps.size(); ++rep)
    for (uint32_t slot = 0; slot < m_reps[rep].state.slots().size(); ++slot) {
      Request& r = m_reps[rep].state.req(slot);
      if (r.state == RequestState::Pending) continue;
      // Prefilled and waiting for its KV to reach a decode replica: not served yet.
      if (r.state == RequestState::Released && m_reps[rep].role == PoolRole::Prefill)
        r.state = RequestState::Running;
      depart(rep, slot);
    }
}

void Simulation::on_empty_plan(uint32_t rep_index, bool preempted, Time wake) {
  if (preempted) {
    // The pass stopped when the request asking for KV was its own victim (a keyed order's
    // least urgent request need not be the last one running; vLLM V1 stops there too) and
    // planned nothing: the engine plans again at once, as vLLM's next schedule() call does,
    // and the memory freed goes to the requests still running. Each such pass leaves fewer
    // requests running (an admission would have been planned), so this ends.
    try_start_step(rep_index);
    return;
  }
  Replica& rep = m_reps[rep_index];
  if (wake != Time::max() && wake > m_now && wake < rep.timer_at) {
    rep.timer_at = wake;
    post(Event::timer(wake, rep_index));
  }
}

void Simulation::try_start_step(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  if (rep.down) return;
  if (!m_pipes.empty()) {  // micro-batches (sim/pipeline_engine.cpp)
    pipeline_start(rep_index);
    return;
  }
  // Every running request decoding and nothing else to plan: no per-request work.
  if (rep.streak.enabled && streak_step(rep_index)) return;
  BatchState& state = rep.state;
  // Speculative decoding: k drafts per decode, unless too many requests run (max_batch).
  const int32_t spec_k = m_spec ? m_spec->k_for(state.running().size()) : 0;
  if (m_spec) {
    state.set_speculative_k(spec_k);
    m_spec->begin_step();
  }
  if (m_lora) state.begin_adapter_step();
  const int64_t preempted_before = state.preemptions();
  rep.scheduler->plan_step(state);
  // The leading decodes the scheduler summed as it planned them are not walked again.
  const DecodeRun run = state.take_decode_run();
  if (m_check) check_decode_run(rep_index, run);
  const Time wake = state.take_wake();
  const auto& plan = state.plan();
  if (plan.empty()) {
    on_empty_plan(rep_index, state.preemptions() != preempted_before, wake);
    return;
  }
  if (m_spec && spec_k == 0) m_spec->note_off_step();
  StepShape shape;
  const RequestSlots& reqs = state.slots();
  // The hot loop of a run: the decodes' sums in locals, which stay in registers.
  auto decodes = static_cast<int32_t>(run.entries);
  int64_t decode_read = run.read, longest = run.longest, shortest = run.shortest;
  int64_t verify_tokens = 0;
  int32_t prefill_sequences = 0, decode_tokens = decodes;  // for the StepRecord
  for (auto it = plan.begin() + run.entries; it != plan.end(); ++it) {
    const StepEntry& e = *it;
    const Request& r = reqs[e.slot];
    if (e.kind == EntryKind::Decode && e.prefill_tokens > 1) {
      // A verify: a query of 1 + drafts tokens over the stored context, as a prefill chunk is
      // (docs/speculative.md#cost); the proposer drafted them first.
      const int32_t t = e.prefill_tokens;
      shape.prefill_tokens += t;
      shape.prefill_tokens_sq += static_cast<double>(t) * t;
      shape.prefill_context_tokens += r.context_tokens;
      verify_tokens += t;
      decode_tokens += t;
      m_spec->add_verify(r.context_tokens, t - 1);
      continue;
    }
    if (e.kind == EntryKind::Prefill) {
      shape.prefill_tokens += e.prefill_tokens;
      shape.prefill_tokens_sq += static_cast<double>(e.prefill_tokens) * e.prefill_tokens;
      shape.prefill_context_tokens += r.context_tokens;
      ++prefill_sequences;
      continue;
    }
    // A decode reads its context and the token it computes; padding only its context.
    const int64_t read = int64_t{r.context_tokens} + (e.kind == EntryKind::Decode ? 1 : 0);
    ++decodes;
    decode_tokens += e.kind == EntryKind::Decode ? 1 : 0;
    decode_read += read;
    longest = std::max(longest, read);
    shortest = std::min(shortest, read);
  }
  shape.decode_sequences = decodes;
  shape.decode_context_tokens = decode_read;
  shape.decode_context_max = longest;
  shape.decode_context_min = decodes > 0 ? shortest : 0;
  shape.sequences = static_cast<int32_t>(plan.size());
  launch_step(rep_index, shape, verify_tokens, prefill_sequences, decode_tokens);
}

void Simulation::launch_step(uint32_t rep_index, const StepShape& shape, int64_t verify_tokens,
                             int32_t prefill_sequences, int32_t decode_tokens, bool post_end) {
  launch<false>(rep_index, shape, verify_tokens, prefill_sequences, decode_tokens, post_end);
}

void Simulation::notify_step(uint32_t rep_index, Time duration, const StepShape& shape,
                             int32_t prefill_sequences, int32_t decode_tokens,
                             int64_t prefill_tokens, const std::optional<StepCost>& cost) {
  const int64_t capacity = m_reps[rep_index].state.kv().capacity_tokens();
  for (StepObserver* o : m_end_observers) o->on_step_end(rep_index, m_now + duration, capacity);
  if (!m_record_observers.empty())
    notify_record(rep_index, duration, shape, prefill_sequences, decode_tokens, prefill_tokens,
                  cost);
}

void Simulation::notify_record(uint32_t rep_index, Time duration, const StepShape& shape,
                               int32_t prefill_sequences, int32_t decode_tokens,
                               int64_t prefill_tokens, const std::optional<StepCost>& cost) {
  const BatchState& state = m_reps[rep_index].state;
  StepRecord& s = m_step_record;
  s.start = m_now;
  s.duration = duration;
  s.replica = rep_index;
  s.sequences = shape.sequences;
  s.prefill_sequences = prefill_sequences;
  s.decode_tokens = decode_tokens;
  s.prefill_tokens = prefill_tokens;
  s.kv_used_tokens = state.kv().used_tokens();
  s.kv_capacity_tokens = state.kv().capacity_tokens();
  s.waiting = static_cast<int32_t>(state.waiting().size());
  s.running = static_cast<int32_t>(state.running().size());
  s.preemptions = state.preemptions();
  s.bound = cost ? (cost->bandwidth_bound ? 0 : 1) : -1;
  s.bytes = cost ? cost->bytes : 0;
  s.flops = cost ? cost->flops : 0;
  for (StepObserver* o : m_record_observers) o->on_step(s);
}

void Simulation::finish_step(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  BatchState& state = rep.state;
  const Time now = m_now;
  if (rep.streak.in_flight) {  // a decode streak's step: nothing to credit (decode_streak.h)
    end_streak_step(rep_index);
    return;
  }
  int32_t finished = 0;
  if (!m_step_end_timeouts.empty()) timeouts_at_step_end(rep_index);
  RequestSlots& reqs = state.mutable_slots();
  for (const StepEntry& e : state.plan()) {
    Request& r = reqs[e.slot];
    if (e.kind == EntryKind::Decode) {
      // 1 + drafts when it verified: it gains the accepted drafts and the token it computed.
      const int32_t gained = e.prefill_tokens > 1 ? 1 + m_spec->draw(e.prefill_tokens - 1) : 1;
      r.context_tokens += gained;
      r.generated_tokens += gained - 1;  // and the one every token-producing entry adds below
    } else if (e.kind == EntryKind::Prefill) {
      r.context_tokens += e.prefill_tokens;
      if (r.context_tokens != r.prefill_target) continue;  // more chunks to come
    } else {
      continue;  // padding produces nothing
    }
    credit_token(r, e.slot, now, finished);
  }
  if (!m_cancelled.empty()) cancel_requests(rep_index);
  state.set_finished_this_step(finished);
  rep.scheduler->after_step(state);
  for (uint32_t slot : state.departed()) {
    if (rep.role == PoolRole::Prefill && rep.output_tokens[slot] > 1)
      hand_off(rep_index, slot);  // its KV stays held here until a decode replica admits it
    else if (rep.role == PoolRole::Prefill) {  // one output token: done here
      state.free_held_kv(slot);
      depart(rep_index, slot);
    } else {
      depart(rep_index, slot);
    }
  }
  state.departed().clear();
  if (m_transfers && !m_transfers->inbox(rep_index).empty()) admit_delivered(rep_index);
  state.plan().clear();
  rep.busy = false;
  if (m_check) check_invariants(rep_index, "after the step");
}

void Simulation::check_decode_run(uint32_t rep_index, const DecodeRun& run) const {
  const BatchState& state = m_reps[rep_index].state;
  DecodeRun sums;
  const auto& plan = state.plan();
  for (uint32_t k = 0; k < run.entries && k < plan.size(); ++k) {
    const StepEntry& e = plan[k];
    if (e.kind != EntryKind::Decode || e.prefill_tokens != 0) break;
    const int64_t read = int64_t{state.req(e.slot).context_tokens} + 1;
    ++sums.entries;
    sums.read += read;
    sums.longest = std::max(sums.longest, read);
    sums.shortest = std::min(sums.shortest, read);
  }
  // Before the step is counted: it is step steps + 1, as check_invariants names it after launch.
  if (sums.entries != run.entries || sums.read != run.read || sums.longest != run.longest ||
      (run.entries > 0 && sums.shortest != run.shortest))
    throw InvariantError(fmt::format(
        "invariant broken after planning step {} at {} ns: the scheduler's decode sums ({} "
        "entries, {} tokens read, longest {}) differ from the plan's ({}, {}, {})",
        m_stats.replicas[rep_index].steps + 1, m_now.count_ns(), run.entries, run.read, run.longest,
        sums.entries, sums.read, sums.longest));
}

void Simulation::check_invariants(uint32_t rep_index, const char* when) {
  const BatchState& state = m_reps[rep_index].state;
  const auto& reqs = state.slots();
  auto fail = [&](const Request* r, const std::string& what) {
    throw InvariantError(fmt::format(
        "invariant broken {} step {} at {} ns{}{}: {}", when, m_stats.replicas[rep_index].steps,
        m_now.count_ns(),
        m_reps.size() > 1 ? fmt::format(" on replica {}", rep_index) : std::string(),
        r ? fmt::format(" (request {}: state {}, context {}, {} of {} tokens, KV held {})",
                        r->spec.id, static_cast<int>(r->state), r->context_tokens,
                        r->generated_tokens, r->spec.output_tokens, r->kv_held_tokens)
          : std::string(),
        what));
  };
  const KvManager& kv = state.kv();
  if (kv.used_tokens() > kv.capacity_tokens())
    fail(nullptr,
         fmt::format("KV use {} exceeds capacity {}", kv.used_tokens(), kv.capacity_tokens()));
  // Streaks are written back before other events only while this count says one is captured.
  int32_t captured = 0;
  for (const Replica& rep : m_reps) captured += rep.streak.active ? 1 : 0;
  if (captured != m_active_streaks)
    fail(nullptr,
         fmt::format("{} decode streaks captured but {} counted", captured, m_active_streaks));
  m_seen.assign(reqs.size(), 0);
  int64_t held = 0;
  // A decode streak's members, the first of the batch, hold what the streak has grown them to.
  const DecodeStreak& streak = m_reps[rep_index].streak;
  const size_t members = streak.active ? static_cast<size_t>(streak.members) : 0;
  for (size_t i = 0; i < state.running().size(); ++i) {
    const uint32_t slot = state.running()[i];
    const Request& r = reqs[slot];
    if (m_seen[slot]++) fail(&r, "listed twice in the running batch");
    if (r.state != RequestState::Running && r.state != RequestState::Finished)
      fail(&r, "in the running batch but not running");
    if (r.generated_tokens > r.spec.output_tokens) fail(&r, "produced more tokens than asked");
    held += i < members ? member_held(streak, r) : r.kv_held_tokens;
  }
  for (uint32_t slot : state.waiting()) {
    const Request& r = reqs[slot];
    if (m_seen[slot]++) fail(&r, "both queued and running, or queued twice");
    if (r.state != RequestState::Queued) fail(&r, "in the queue but not queued");
    if (r.kv_held_tokens != 0) fail(&r, "queued while holding KV");
  }
  for (const Request& r : reqs)  // prefilled, its KV waiting to leave for a decode replica
    if (r.state == RequestState::Released) held += r.kv_held_tokens;
  // With a prefix cache, requests share blocks: what they hold together covers what is used.
  if (kv.prefix_stats() ? held < kv.used_tokens() : held != kv.used_tokens())
    fail(nullptr, fmt::format("KV use {} differs from the {} tokens the running requests hold",
                              kv.used_tokens(), held));
}

void Simulation::check_all_served() const {
  // Every request has left, so no KV is held (a prefix cache keeps what it cached).
  for (uint32_t i = 0; m_check && i < m_reps.size(); ++i) {
    const KvManager& kv = m_reps[i].state.kv();
    if (!kv.prefix_stats() && kv.used_tokens() != 0)
      throw InvariantError(fmt::format("replica {} holds {} KV tokens after every request left", i,
                                       kv.used_tokens()));
  }
  if (m_c.source->waiting() != 0)
    throw std::logic_error(
        fmt::format("simulation ended with {} requests still waiting for others to leave",
                    m_c.source->waiting()));
  for (const Replica& rep : m_reps)
    for (const Request& r : rep.state.slots()) {
      if (r.state == RequestState::Pending) continue;  // a free slot
      throw std::logic_error(fmt::format(
          "simulation ended with request {} unserved (state {}, {} of {} tokens generated): "
          "the scheduler stopped planning steps",
          r.spec.id, static_cast<int>(r.state), r.generated_tokens, r.spec.output_tokens));
    }
}

}  // namespace servesim
