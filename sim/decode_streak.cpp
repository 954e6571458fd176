// The engine's decode streaks (sim/decode_streak.h).
#include "sim/decode_streak.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <utility>

#include "sim/simulation.h"
#include "sim/step_launch.h"

namespace servesim {

namespace {

/// The most tokens per block a streak counts boundaries for (one counter per token of a block).
constexpr int64_t k_max_streak_block = 4096;

/// The most steps a streak may have run for a request to join it (its counts are kept less
/// the steps, in int32).
constexpr int64_t k_max_join_steps = int64_t{1} << 28;

int64_t round_up(int64_t tokens, int64_t block) { return (tokens + block - 1) / block * block; }

/// The streak's longest and shortest context over the members at `slots[0, n)`.
void set_context_extremes(DecodeStreak& s, const RequestSlots& reqs, const uint32_t* slots,
                          size_t n) {
  int64_t longest = INT64_MIN, shortest = INT64_MAX;
  for (size_t i = 0; i < n; ++i) {
    const int64_t context = reqs[slots[i]].context_tokens;
    longest = std::max(longest, context);
    shortest = std::min(shortest, context);
  }
  s.context_max = longest;
  s.context_min = shortest;
}

}  // namespace

void Simulation::setup_streaks() {
  // What the streak does not model: anything that reads or changes a request between steps
  // (speculation, adapters, transfers, failures, autoscaling, admission and abandonment) and
  // micro-batched pipelines.
  const bool engine_allows = !m_spec && !m_lora && !m_transfers && !m_failures && !m_autoscale &&
                             !m_admission && m_pipes.empty();
  for (Replica& rep : m_reps) {
    const KvManager& kv = rep.state.kv();
    DecodeStreak& s = rep.streak;
    s.enabled = engine_allows && rep.scheduler->repeat_decode_limit() > 0 && kv.lazy_growth() &&
                !kv.offload() && kv.block_tokens() <= k_max_streak_block;
    if (!s.enabled) continue;
    s.limit = rep.scheduler->repeat_decode_limit();
    s.preempts = rep.scheduler->preempts_newest();
    s.nothing_holds = rep.scheduler->admits_nothing_as_kv_fills();
    s.block = kv.block_tokens();
    s.boundaries.assign(static_cast<size_t>(s.block), 0);
  }
}

namespace {

/// Whether a running request can be a streak's member: decoding, with a token left to produce,
/// no cancel point, and its next block due within a block's steps (it holds whole blocks).
bool can_join(const Request& r, int64_t block) {
  const int64_t room = r.kv_held_tokens - r.context_tokens;  // tokens it may add without a block
  return r.spec.output_tokens - r.generated_tokens >= 1 && r.state == RequestState::Running &&
         !r.prefilling() && r.spec.cancel_after_tokens == 0 && room >= 0 && room < block;
}

/// The streak's figures as a walk of its members sums them (capture_streak, join_streak), in
/// locals that stay in registers through the walk.
struct MemberSums {
  int64_t sum, longest, shortest, left_min;
};

/// Adds member `r` (its counts as kept) to `m` and to the block boundaries; returns the step at
/// whose end it leaves.
[[gnu::always_inline]] inline int64_t add_member(MemberSums& m, const Request& r,
                                                 int32_t* boundaries, int64_t block) {
  const int64_t context = r.context_tokens;
  // Its next block at step held - context + 1 of the capture's count, then every block steps.
  ++boundaries[(r.kv_held_tokens - context + 1) % block];
  m.sum += context;
  m.longest = std::max(m.longest, context);
  m.shortest = std::min(m.shortest, context);
  const int64_t leaves_at = r.spec.output_tokens - r.generated_tokens;
  m.left_min = std::min(m.left_min, leaves_at);
  return leaves_at;
}

/// Sets the streak's figures from `m`.
void set_sums(DecodeStreak& s, const MemberSums& m) {
  s.context_sum = m.sum;
  s.context_max = m.longest;
  s.context_min = m.shortest;
  s.left_min = m.left_min;
}

}  // namespace

bool Simulation::capture_streak(Replica& rep) {
  DecodeStreak& s = rep.streak;
  const RequestSlots& reqs = rep.state.slots();
  const std::vector<uint32_t>& running = rep.state.running();
  std::fill(s.boundaries.begin(), s.boundaries.end(), 0);
  s.steps = 0;
  s.leaves.clear();
  // One walk, join_streak's at no steps run (a member's counts are kept as they are) with
  // the figures in locals and the leave heap made once at the end (its keys are distinct, so
  // the members leave in the same order however the heap was built). A request that cannot
  // join leaves nothing to undo: the figures are set again at the next capture.
  s.leaves.resize(running.size());
  uint64_t* const leaves = s.leaves.data();
  int32_t* const boundaries = s.boundaries.data();
  const int64_t block = s.block;
  MemberSums m{0, INT64_MIN, INT64_MAX, INT64_MAX};
  for (size_t i = 0; i < running.size(); ++i) {
    const uint32_t slot = running[i];
    const Request& r = reqs[slot];
    if (!can_join(r, block)) {
      s.leaves.clear();
      return false;
    }
    leaves[i] = leave_key(add_member(m, r, boundaries, block), slot);
  }
  std::make_heap(s.leaves.begin(), s.leaves.end(), std::greater<>());
  s.members = static_cast<int64_t>(running.size());
  set_sums(s, m);
  s.active = true;
  s.in_flight = false;
  ++m_active_streaks;
  return true;
}

bool Simulation::join_streak(Replica& rep) {
  DecodeStreak& s = rep.streak;
  RequestSlots& reqs = rep.state.mutable_slots();
  const std::vector<uint32_t>& running = rep.state.running();
  const auto members = static_cast<size_t>(s.members);
  // Counts kept less the steps must stay far from int32's limits: a streak that long is
  // written back and captured afresh instead.
  if (s.steps > k_max_join_steps) return false;
  for (size_t i = members; i < running.size(); ++i)
    if (!can_join(reqs[running[i]], s.block)) return false;
  // Each joins with its counts kept less the steps already run, as if it had been captured
  // with the rest: the streak's figures then hold for it too (materialize adds the steps back).
  // The figures are kept in locals through the walk, as capture_streak keeps them (a call a
  // member, its figures read and written through the streak, cost about 30 instructions more).
  const auto steps = static_cast<int32_t>(s.steps);
  const int64_t block = s.block;
  int32_t* const boundaries = s.boundaries.data();
  MemberSums m{s.context_sum, s.context_max, s.context_min, s.left_min};
  for (size_t i = members; i < running.size(); ++i) {
    const uint32_t slot = running[i];
    Request& r = reqs[slot];
    r.context_tokens -= steps;
    r.generated_tokens -= steps;
    s.leaves.push_back(leave_key(add_member(m, r, boundaries, block), slot));
    std::push_heap(s.leaves.begin(), s.leaves.end(), std::greater<>());
  }
  set_sums(s, m);
  s.members = static_cast<int64_t>(running.size());
  return true;
}

// The body of a streak's next step, shared by its first (start_streak_step) and the loop.
template <bool k_plain>
[[gnu::always_inline]] inline bool Simulation::next_streak_step(uint32_t rep_index, int64_t n,
                                                                bool waiting, bool first) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  BatchState& state = rep.state;
  // Every member has a token left to produce in this step (s.left_min > s.steps: one that
  // produces its last leaves at the step's end, leave_streak).
  const int64_t step = s.steps + 1;
  const int32_t blocks = s.boundaries[static_cast<size_t>(step % s.block)];
  if (blocks > 0 && !state.kv().take_blocks(blocks)) {
    // Near capacity: the scheduler preempts, in this step as it would plan it where it says
    // how (out of line: the streak's loop reads the members again), else in the ordinary
    // step.
    if (s.preempts && preempt_streak_members(rep_index, step)) return true;
    suspend_streak(rep_index);
    return false;
  }
  // A queue the step takes from (its head fits what is left): the scheduler plans the
  // admissions after the members' decodes, or the step goes the ordinary way. Asked again
  // only where the queue or the batch may have changed since it said "nothing"
  // (DecodeStreak::admits_none: the loop's steps that change neither take only blocks).
  StepShape shape;
  int32_t prefill_sequences = 0;
  if (waiting && !s.admits_none && rep.scheduler->admits_nothing(state)) {
    s.admits_none = s.nothing_holds;
  } else if (waiting && !s.admits_none) {
    if (!rep.scheduler->plan_admissions(state, n)) {
      if (blocks > 0) (void)state.kv().take_blocks(-blocks);
      materialize(rep);
      return false;
    }
    // Summed as try_start_step sums the entries after the decodes (the same order).
    for (const StepEntry& e : state.plan()) {
      if (e.kind != EntryKind::Prefill)
        throw std::logic_error(
            "a scheduler's plan_admissions planned an entry other than a prefill");
      shape.prefill_tokens += e.prefill_tokens;
      shape.prefill_tokens_sq += static_cast<double>(e.prefill_tokens) * e.prefill_tokens;
      shape.prefill_context_tokens += state.req(e.slot).context_tokens;
      ++prefill_sequences;
    }
  }
  // The KV held grows only by this step's blocks and admissions (launch leaves the peak to
  // its caller in a streak): read where it may have, and at a run of streak steps' first.
  launch_streak_step<k_plain>(rep_index, n, step, shape, prefill_sequences,
                              first || blocks > 0 || prefill_sequences > 0);
  return true;
}

template <bool k_plain>
[[gnu::always_inline]] inline void Simulation::launch_streak_step(uint32_t rep_index, int64_t n,
                                                                  int64_t step, StepShape& shape,
                                                                  int32_t prefill_sequences,
                                                                  bool read_peak) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  if (n != s.stretch_asked) {  // the batch changed: the model's terms at the new one
    s.stretch_asked = n;
    if (!rep.step_time->decode_stretch(static_cast<int32_t>(n), s.stretch)) s.stretch.batch = 0;
  }
  s.in_flight = true;
  ++m_stats.streak_steps;
  // Each member reads its context at the capture, the steps since, and the token it computes.
  shape.sequences = static_cast<int32_t>(n) + prefill_sequences;
  shape.decode_sequences = static_cast<int32_t>(n);
  shape.decode_context_tokens = s.context_sum + n * step;
  shape.decode_context_max = s.context_max + step;
  shape.decode_context_min = s.context_min + step;
  if (!k_plain && m_check) check_streak(rep_index, shape);
  if (read_peak) {
    ReplicaStats& rs = m_stats.replicas[rep_index];
    rs.peak_kv_used_tokens = std::max(rs.peak_kv_used_tokens, rep.state.kv().used_tokens());
  }
  launch<true, k_plain>(rep_index, shape, 0, prefill_sequences, static_cast<int32_t>(n), false);
}

// end_streak_step, inline in the streak's loop.
template <bool k_plain>
[[gnu::always_inline]] inline bool Simulation::count_streak_step(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  ++s.steps;
  s.in_flight = false;
  s.last_end = m_now;
  const bool changed = s.steps == s.left_min || !rep.state.plan().empty();
  if (changed)
    settle_streak_step(rep_index);
  else
    rep.state.set_finished_this_step(0);  // the scheduler's after_step has nothing to do
  rep.busy = false;
  if (!k_plain && m_check) check_invariants(rep_index, "after the step");
  return changed;
}

bool Simulation::streak_step(uint32_t rep_index) {
  m_reps[rep_index].streak.end_sink_asked = false;  // a run of streak steps starts
  if (!start_streak_step(rep_index)) return false;
  // None of these changes during a run: --check, pipeline stages, the step observers, and
  // whether steps that change the batch end in the loop (m_streak_changes_inline).
  const bool plain = !m_check && m_stats.replicas[rep_index].pipeline_stages == 0 &&
                     m_record_observers.empty() && !m_end_observers.empty() &&
                     m_streak_changes_inline;
  return plain ? streak_loop<true>(rep_index) : streak_loop<false>(rep_index);
}

template <bool k_plain>
bool Simulation::streak_loop(uint32_t rep_index) {
  // Steps that end before anything else happens end here, one after another, as the event
  // loop would end them (dispatch: the clock, finish_step, schedule -> try_start_step ->
  // start_streak_step): no event, no queue. A step that would not (another event first or at
  // the same instant, the time limit, an interrupt) gets its end event; so does every
  // k_inline_steps-th, so that the event loop's checks still run now and then. Only a step in
  // which requests leave or join changes the queue or the batch, or posts an event: after it
  // the first queued event's time, whether anyone waits and the members are read again.
  constexpr int k_inline_steps = 1024;
  Replica& rep = m_reps[rep_index];
  BatchState& state = rep.state;
  Time next_event = m_events.empty() ? Time::max() : m_events.top().time();
  bool waiting = !state.waiting().empty();
  // The members: the batch less those admitted in the step in flight (which join after it).
  auto n = static_cast<int64_t>(state.running().size()) - static_cast<int64_t>(state.plan().size());
  DecodeStreak& s = rep.streak;
  for (int k = 0; k < k_inline_steps; ++k) {
    // Runs of steps in which only the clock moves go through quiet_streak_steps first (its
    // cheapest checks here: a model without a stretch, an admission in flight).
    if constexpr (k_plain) {
      if (s.stretch.batch == n && state.plan().empty()) {
        k += quiet_streak_steps(rep_index, n, waiting, next_event, k_inline_steps - k);
        if (k == k_inline_steps) break;
      }
    }
    // This step ends first: strictly before every queued event, within the limits.
    const Time end = rep.step_end;
    // In the parallel engine's shards a step in which members produce their last token, or
    // requests were admitted, ends by its event (m_streak_changes_inline).
    if (!(end < next_event) || end > m_limits.max_sim_time ||
        (m_limits.interrupt && *m_limits.interrupt) || rep.schedule_posted ||
        (!k_plain && !m_streak_changes_inline &&
         (s.steps + 1 == s.left_min || !state.plan().empty())))
      break;
    m_now = end;
    m_stats.end = end;
    state.set_now(end);
    if (count_streak_step<k_plain>(rep_index)) {
      // Requests left or joined the batch; departures may have posted events (a session's
      // next turn, ready now). As dispatch's schedule() after a step end: planning waits for
      // anything else due at this instant, else the next step starts here, the queue, the
      // batch and the first event read again.
      if (!m_events.empty() && !(m_events.top().time() > m_now)) {
        post_schedule(rep_index);
        return true;
      }
      if (!start_streak_step(rep_index)) return false;
      next_event = m_events.empty() ? Time::max() : m_events.top().time();
      waiting = !state.waiting().empty();
      n = static_cast<int64_t>(state.running().size()) - static_cast<int64_t>(state.plan().size());
      continue;
    }
    // The next step (start_streak_step's checks but those that cannot change here: the batch's
    // size and the capture).
    if (!next_streak_step<k_plain>(rep_index, n, waiting, false)) return false;
    if (s.members != n) {  // it preempted members (preempt_streak_members): they wait
      n = s.members;
      waiting = true;
    }
  }
  post(Event::step_end(rep.step_end, rep_index));
  return true;
}

// The plain loop's iterations in which nothing but the clock, the books and the KV's block
// count move: the step ending is no member's last, nothing is admitted (the plan is empty and
// the queue, if any, could take nothing: admits_nothing depends on the queue, the batch and the
// KV, none of which these steps change; with a queue, a step that takes blocks is left to the
// general body, which asks it again), the steps' blocks are free, their ends go into the
// observer's array, and the stretch costs them. The steps' count and blocks are worked out
// first and the blocks taken at once (those of steps not run given back at the end: the peak
// KV held is then the last step's, as next_streak_step reads it); each iteration computes its
// step and changes nothing until all of it is known to run, so one that cannot run leaves
// everything as it was and the loop's general body runs it. The books are kept in locals and
// written at the end, every floating-point sum taken a step at a time in launch's order.
[[gnu::noinline]] int Simulation::quiet_streak_steps(uint32_t rep_index, int64_t n, bool waiting,
                                                     Time next_event, int budget) {
  constexpr int k_most = 1024;  // streak_loop's k_inline_steps: no call runs more
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  BatchState& state = rep.state;
  // The step in flight, which the first iteration ends (and starts the next).
  const int64_t first = s.steps + 1;
  if (rep.schedule_posted || !state.plan().empty() || s.stretch_asked != n ||
      s.stretch.batch != n || n == 0 || s.end_sink.ends == nullptr ||
      state.step_overhead() != Time::ns(0))
    return 0;
  // Steps ending before any member's last (left_min), and ends the array takes at its bound.
  GrowArray<int64_t>& ends = *s.end_sink.ends;
  const size_t kept = ends.size();
  if (kept >= s.end_sink.limit) return 0;
  int64_t count = std::min<int64_t>(
      {budget, k_most, s.left_min - first, static_cast<int64_t>(s.end_sink.limit - kept)});
  if (count <= 0) return 0;
  // Step first + 1 + j takes boundaries[(first + 1 + j) % block] blocks. With a queue, the steps
  // before the first that takes any (admits_nothing holds for them as now).
  const int32_t* const boundaries = s.boundaries.data();
  const int64_t block = s.block;
  const int64_t at0 = (first + 1) % block;
  if (waiting && !s.admits_none) {
    if (s.nothing_holds) {
      // Its "nothing" holds while the steps only take blocks (admits_nothing_as_kv_fills): asked
      // once for the run, as next_streak_step asks it, and kept for the steps after.
      if (!rep.scheduler->admits_nothing(state)) return 0;
      s.admits_none = true;
    } else {
      int64_t clear = 0;
      for (int64_t at = at0; clear < count && boundaries[at] == 0; ++clear)
        if (++at == block) at = 0;
      count = clear;
      if (count == 0 || !rep.scheduler->admits_nothing(state)) return 0;
    }
  }
  const DecodeStretch& stretch = s.stretch;
  // The loop goes on while the step in flight ends strictly before the first queued event and
  // within the time limit, and no interrupt came.
  const int64_t stop_ns =
      std::min(next_event.count_ns(), m_limits.max_sim_time == Time::max()
                                          ? Time::max().count_ns()
                                          : m_limits.max_sim_time.count_ns() + 1);
  const volatile std::sig_atomic_t none = 0;
  const volatile std::sig_atomic_t* const interrupt =
      m_limits.interrupt != nullptr ? m_limits.interrupt : &none;
  const int64_t limit_ns = Time::limit().count_ns();
  ReplicaStats& rs = m_stats.replicas[rep_index];
  KvManager& kv = state.kv();
  int64_t new_ends[k_most];
  int64_t i = 0, busy_ns = 0, bandwidth_bound = 0, blocks = 0;
  double active_s = rs.active_s, bytes = rs.bytes_moved, flops = rs.flops;
  // Run once, and again up to the first step that takes blocks where the KV has not all those
  // of the steps run (the books are locals, the ends a local array: nothing to undo).
  for (bool again = true; again;) {
    again = false;
    i = busy_ns = bandwidth_bound = blocks = 0;
    active_s = rs.active_s;
    bytes = rs.bytes_moved;
    flops = rs.flops;
    // The starting step's shape: each member reads its context at the capture plus the steps.
    int64_t context = s.context_sum + n * (first + 1);
    int64_t context_max = s.context_max + first + 1;
    int64_t end_ns = rep.step_end.count_ns();  // of the step in flight
    for (int64_t at = at0; i < count; ++i) {
      if (!(end_ns < stop_ns) || *interrupt != 0) break;
      StepCost c;
      if (!stretch.cost_at(context, context_max, c)) break;
      // launch's step time (no overhead in a quiet step) and end.
      int64_t step_ns = 0;
      if (!step_ns_of(c.step_ms, step_ns)) break;
      step_ns = std::max<int64_t>(step_ns, 1);
      if (step_ns > limit_ns - end_ns) break;
      // launch's books (add_step_cost), a step at a time.
      busy_ns += step_ns;
      active_s += std::min(static_cast<double>(step_ns) * 1e-9,
                           std::max(c.ideal_ms_bandwidth, c.ideal_ms_compute) * 1e-3);
      bandwidth_bound += c.bandwidth_bound;
      bytes += c.bytes;
      flops += c.flops;
      end_ns += step_ns;
      new_ends[i] = end_ns;
      context += n;
      ++context_max;
      blocks += boundaries[at];
      if (++at == block) at = 0;
    }
    if (blocks > 0) {
      if (!kv.take_blocks(blocks)) {
        int64_t clear = 0;
        for (int64_t at = at0; clear < i && boundaries[at] == 0; ++clear)
          if (++at == block) at = 0;
        count = clear;
        again = count > 0;
        i = 0;
        continue;
      }
      // The KV held grew by these steps' blocks: the peak is the last step's, as read by
      // next_streak_step where a step takes blocks.
      rs.peak_kv_used_tokens = std::max(rs.peak_kv_used_tokens, kv.used_tokens());
    }
  }
  if (i == 0) return 0;
  // Grown as push_back grows it, not to the size asked each time.
  const size_t held = kept + static_cast<size_t>(i);
  if (held > ends.capacity()) ends.reserve(ends.grown_capacity(held));
  ends.resize(held);
  std::memcpy(ends.data() + kept, new_ends, static_cast<size_t>(i) * sizeof(int64_t));
  // As the loop's general body leaves them after its last iteration.
  const Time ended = i >= 2 ? Time::ns(new_ends[i - 2]) : rep.step_end;
  m_now = ended;
  m_stats.end = ended;
  state.set_now(ended);
  state.set_finished_this_step(0);
  s.steps += i;
  s.last_end = ended;
  rep.step_end = Time::ns(new_ends[i - 1]);
  m_stats.streak_steps += i;
  m_stats.streak_quiet_steps += i;
  rs.steps += i;
  rs.busy_ns += busy_ns;
  rs.seat_steps += n * i;
  rs.costed_steps += i;
  rs.bandwidth_bound_steps += bandwidth_bound;
  rs.active_s = active_s;
  rs.bytes_moved = bytes;
  rs.flops = flops;
  m_stats.peak_bytes_per_s = stretch.peak_bytes_per_s;
  m_stats.peak_flops_per_s = stretch.peak_flops_per_s;
  return static_cast<int>(i);
}

bool Simulation::start_streak_step(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  BatchState& state = rep.state;
  const auto n = static_cast<int64_t>(state.running().size());
  // What the scheduler's promise needs (Scheduler::repeat_decode_limit).
  if (n == 0 || n > s.limit) {
    s.suspended = false;
    materialize(rep);
    return false;
  }
  // A streak taken up again (resume_streak) may leave requests past its members (admitted in
  // the ordinary step, or not taken up): they join as admissions do.
  if (!s.active && !resume_streak(rep_index)) {
    if (!capture_streak(rep)) return false;
  } else if (n > s.members && !join_streak(rep)) {  // admitted by its last step
    materialize(rep);
    return false;
  }
  // The observer's array, asked for once a run of streak steps (the loop's batch changes
  // start the run's later steps here): within it no other replica's step ends, so the array
  // stays where it is (StepObserver::end_sink).
  if (!s.end_sink_asked) {
    s.end_sink = m_end_observers.size() == 1
                     ? m_end_observers.front()->end_sink(rep_index, state.kv().capacity_tokens())
                     : StepEndSink{};
    s.end_sink_asked = true;
  }
  s.admits_none = false;  // the queue or the batch may have changed since it was asked
  return next_streak_step(rep_index, n, !state.waiting().empty(), true);
}

bool Simulation::end_streak_step(uint32_t rep_index) { return count_streak_step(rep_index); }

void Simulation::settle_streak_step(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  BatchState& state = rep.state;
  RequestSlots& reqs = state.mutable_slots();
  const std::vector<uint32_t>& running = state.running();
  const Time now = m_now;
  int32_t finished = 0;
  // The earliest admitted of the finished, where the scheduler's release starts (in a batch
  // it searches: SchedulerView::k_search_batch).
  uint32_t first = UINT32_MAX, first_seq = UINT32_MAX;
  if (running.size() < SchedulerView::k_search_batch) first_seq = 0;
  if (s.steps == s.left_min) {
    // The members whose last token this step produced (the least of the leave heap) are
    // written back and finished as finish_step credits a decode, and taken out of the
    // streak's figures; the longest and shortest are found again (a walk of the members, the
    // first of running()) only when one of them left.
    bool extreme_left = false;
    while (!s.leaves.empty() && leave_step(s.leaves.front()) == s.steps) {
      std::pop_heap(s.leaves.begin(), s.leaves.end(), std::greater<>());
      const uint32_t slot = leave_slot(s.leaves.back());
      Request& r = reqs[slot];
      s.leaves.pop_back();
      if (r.admission_seq < first_seq) {
        first_seq = r.admission_seq;
        first = slot;
      }
      s.context_sum -= r.context_tokens;
      extreme_left |= r.context_tokens == s.context_max || r.context_tokens == s.context_min;
      const int64_t boundary = r.kv_held_tokens - r.context_tokens + 1;  // as add_member
      --s.boundaries[static_cast<size_t>(boundary % s.block)];
      r.kv_held_tokens = member_held(s, r);
      r.context_tokens += static_cast<int32_t>(s.steps);
      r.generated_tokens += static_cast<int32_t>(s.steps);
      if (r.first_token == Time::max()) r.first_token = now;
      r.last_token = now;
      r.state = RequestState::Finished;
      r.finish = now;
      ++finished;
    }
    if (extreme_left) {
      int64_t longest = INT64_MIN, shortest = INT64_MAX;
      for (size_t i = 0; i < static_cast<size_t>(s.members); ++i) {
        const Request& r = reqs[running[i]];
        if (r.state == RequestState::Finished) continue;
        longest = std::max<int64_t>(longest, r.context_tokens);
        shortest = std::min<int64_t>(shortest, r.context_tokens);
      }
      s.context_max = longest;
      s.context_min = shortest;
    }
    s.members -= finished;
    s.left_min = s.leaves.empty() ? INT64_MAX : leave_step(s.leaves.front());
  }
  // The requests admitted in this step: their prefills credited as finish_step credits them.
  for (const StepEntry& e : state.plan()) {
    Request& r = reqs[e.slot];
    r.context_tokens += e.prefill_tokens;
    if (r.context_tokens != r.prefill_target) continue;  // more chunks to come
    credit_token(r, e.slot, now, finished);
    if (r.state == RequestState::Finished && r.admission_seq < first_seq) {
      first_seq = r.admission_seq;
      first = e.slot;
    }
  }
  state.plan().clear();
  if (!m_cancelled.empty()) cancel_requests(rep_index);
  // The scheduler releases the finished (its promise: it does nothing else, Scheduler::
  // repeat_decode_limit), and they depart in its order, as after an ordinary step.
  state.set_finished_this_step(finished, first);
  rep.scheduler->after_step(state);
  for (uint32_t slot : state.departed()) depart(rep_index, slot);
  state.departed().clear();
  if (s.members == 0) {  // every member left: those admitted are as they are
    s.active = false;
    --m_active_streaks;
  }
}

int64_t Simulation::member_held(const DecodeStreak& s, const Request& r) {
  const int64_t grown = r.context_tokens + s.steps + (s.in_flight ? 1 : 0);
  return std::max(r.kv_held_tokens, round_up(grown, s.block));
}

void Simulation::materialize(Replica& rep) {
  DecodeStreak& s = rep.streak;
  if (!s.active) return;
  // Written back before its first step (the queue's head fits, or the KV runs short): every
  // member is as at the capture, holding whole blocks that cover its context (so member_held is
  // what it holds), and there is nothing to write.
  if (s.steps > 0 || s.in_flight) {
    RequestSlots& reqs = rep.state.mutable_slots();
    std::vector<StepEntry>& plan = rep.state.plan();
    const std::vector<uint32_t>& running = rep.state.running();
    for (size_t i = 0; i < static_cast<size_t>(s.members); ++i) {
      const uint32_t slot = running[i];
      Request& r = reqs[slot];
      r.kv_held_tokens = member_held(s, r);
      r.context_tokens += static_cast<int32_t>(s.steps);
      r.generated_tokens += static_cast<int32_t>(s.steps);
      if (s.steps > 0) r.last_token = s.last_end;
      // The step in flight is the scheduler's plan of decodes: the step end credits it (after
      // any admissions planned in it; finish_step's crediting does not depend on the order).
      if (s.in_flight) plan.push_back({slot, EntryKind::Decode, 0});
    }
  }
  s.leaves.clear();
  s.active = false;
  s.in_flight = false;
  --m_active_streaks;
}

void Simulation::suspend_streak(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  // materialize's write-back (no step in flight: its blocks were not taken), each member's
  // figures noted first as settle_streak_step would take them out.
  RequestSlots& reqs = rep.state.mutable_slots();
  const std::vector<uint32_t>& running = rep.state.running();
  const auto members = static_cast<size_t>(s.members);
  s.written.resize(members);
  DecodeStreak::Written* const written = s.written.data();
  const auto steps = static_cast<int32_t>(s.steps);
  const Time last_end = s.last_end;
  const int64_t block = s.block;
  for (size_t i = 0; i < members; ++i) {
    const uint32_t slot = running[i];
    Request& r = reqs[slot];
    // Its next block's step as add_member counts it (taken modulo the block if it
    // leaves).
    const auto first = static_cast<int32_t>(r.kv_held_tokens - r.context_tokens + 1);
    written[i] = {leave_key(r.spec.output_tokens - r.generated_tokens, slot), r.context_tokens,
                  first};
    if (steps == 0) continue;  // as at the capture: nothing to write
    // member_held with no step in flight, the block read once.
    r.kv_held_tokens =
        std::max<int64_t>(r.kv_held_tokens, round_up(r.context_tokens + steps, block));
    r.context_tokens += steps;
    r.generated_tokens += steps;
    r.last_token = last_end;
  }
  s.suspended = true;
  s.suspended_at = m_stats.replicas[rep_index].steps;
  s.active = false;
  --m_active_streaks;
}

namespace {

/// Takes member `w` out of streak `s`'s figures but the longest and shortest context: its
/// boundary, its context from the sum, its key from the leave heap (made the least of all
/// keys, a leave_key being at least 2^32, sifted to the top and popped). Returns whether it
/// held the longest or the shortest. Out of line: the resume's walk keeps its figures in
/// registers.
[[gnu::noinline]] bool drop_member(DecodeStreak& s, const DecodeStreak::Written& w) {
  --s.boundaries[static_cast<size_t>(w.boundary % s.block)];
  s.context_sum -= w.context;
  // A member that finished is the heap's least; one preempted is mostly of the newest, pushed
  // last (searched from the back).
  auto at = s.leaves.begin();
  if (*at != w.key) at = std::find(s.leaves.rbegin(), s.leaves.rend(), w.key).base() - 1;
  *at = 0;
  std::push_heap(s.leaves.begin(), at + 1, std::greater<>());
  std::pop_heap(s.leaves.begin(), s.leaves.end(), std::greater<>());
  s.leaves.pop_back();
  return w.context == s.context_max || w.context == s.context_min;
}

}  // namespace

bool Simulation::resume_streak(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  if (!s.suspended) return false;
  s.suspended = false;
  if (m_stats.replicas[rep_index].steps != s.suspended_at + 1) return false;  // the one step
  const RequestSlots& reqs = rep.state.slots();
  const std::vector<uint32_t>& running = rep.state.running();
  // The ordinary step is the streak's step s.steps + 1. A member it decoded (its context grown
  // by one since the write-back) is taken up again as it is now, the streak's figures moved to
  // count from that step (s.steps 0 again: each member's counts are then its own). The
  // scheduler keeps running()'s order (preemptions and releases take requests out, admissions
  // come after), so those taken up are its first. Any other member (preempted, finished,
  // cancelled) leaves the streak's figures; if it still runs, it is past the members and joins
  // like an admission.
  const int64_t step = s.steps + 1;
  const auto ran = static_cast<int32_t>(step);
  const uint32_t* const batch = running.data();
  const size_t batch_size = running.size();
  size_t kept = 0;
  bool extreme_left = false;
  for (const DecodeStreak::Written& w : s.written) {
    const uint32_t slot = leave_slot(w.key);
    if (kept < batch_size && batch[kept] == slot && reqs[slot].context_tokens - ran == w.context) {
      ++kept;
      continue;
    }
    extreme_left |= drop_member(s, w);
  }
  s.written.clear();
  // Nothing taken up, or a member left whose last token that step produced (it would have
  // finished): the capture sets every figure again.
  if (kept == 0 || leave_step(s.leaves.front()) <= step) return false;
  // Counted from the ordinary step: the sums and extremes by the steps run, the leave steps
  // less them (every key stays above 2^32, their order kept), and a member's next block, due
  // at step j of the old count, is due at step j - step of the new.
  s.context_sum += static_cast<int64_t>(kept) * step;
  s.context_max += step;
  s.context_min += step;
  // Found again among those taken up, as settle_streak_step does.
  if (extreme_left) set_context_extremes(s, reqs, batch, kept);
  const uint64_t shift = leave_key(step, 0);
  for (uint64_t& key : s.leaves) key -= shift;
  std::rotate(s.boundaries.begin(), s.boundaries.begin() + step % s.block, s.boundaries.end());
  s.left_min = leave_step(s.leaves.front());
  s.steps = 0;
  s.members = static_cast<int64_t>(kept);
  s.active = true;
  s.in_flight = false;
  ++m_active_streaks;
  ++m_stats.streak_resumes;
  return true;
}

[[gnu::noinline]] bool Simulation::preempt_streak_members(uint32_t rep_index, int64_t step) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  BatchState& state = rep.state;
  KvManager& kv = state.kv();
  RequestSlots& reqs = state.mutable_slots();
  const std::vector<uint32_t>& running = state.running();
  const int64_t block = s.block;
  const int64_t due = step % block;
  const int64_t steps = s.steps;
  // The scheduler's pass in counts (the paged manager counts whole blocks, and a streak's
  // members are all of running(), none planned): the members take the free blocks in
  // running()'s order, those whose next block is due at this step one each; one that finds
  // none has the newest preempted (its blocks, member_held's with no step in flight, freed)
  // until one is free or it is itself the newest (the pass ends there).
  int64_t free_blocks = (kv.capacity_tokens() - kv.used_tokens()) / block;
  size_t end = running.size();
  for (size_t i = 0; i < end; ++i) {
    const Request& r = reqs[running[i]];
    // Its next block's step as add_member counts it (above the block for a member that
    // joined after the capture).
    if ((r.kv_held_tokens - r.context_tokens + 1) % block != due) continue;
    if (free_blocks > 0) {
      --free_blocks;
      continue;
    }
    for (;;) {
      const Request& v = reqs[running[--end]];
      free_blocks +=
          std::max<int64_t>(v.kv_held_tokens, round_up(v.context_tokens + steps, block)) / block;
      if (end == i) break;
      if (free_blocks > 0) {
        --free_blocks;
        break;
      }
    }
  }
  if (end == 0) return false;  // an empty plan: the ordinary way (Simulation::on_empty_plan)
  // The victims, newest first as the pass takes them: each written back as suspend_streak
  // writes a member back, taken out of the streak's figures, and preempted.
  bool extreme_left = false;
  const auto ran = static_cast<int32_t>(steps);
  while (running.size() > end) {
    const uint32_t slot = running.back();
    Request& r = reqs[slot];
    const DecodeStreak::Written w{leave_key(r.spec.output_tokens - r.generated_tokens, slot),
                                  r.context_tokens,
                                  static_cast<int32_t>(r.kv_held_tokens - r.context_tokens + 1)};
    extreme_left |= drop_member(s, w);
    r.kv_held_tokens = member_held(s, r);
    r.context_tokens += ran;
    r.generated_tokens += ran;
    if (ran > 0) r.last_token = s.last_end;
    state.preempt(slot);
  }
  s.members = static_cast<int64_t>(end);
  // Found again among those left, as settle_streak_step does.
  if (extreme_left) set_context_extremes(s, reqs, running.data(), end);
  s.left_min = leave_step(s.leaves.front());
  // The blocks of those left are free now (the pass gave each its block).
  const int32_t blocks = s.boundaries[static_cast<size_t>(due)];
  if (blocks > 0 && !kv.take_blocks(blocks))
    throw std::logic_error("a decode streak's preemptions left its step's blocks short");
  // The step admits nothing (the scheduler's step that preempted does not), and the queue,
  // which holds the victims, is asked at the next. The KV held is read for the peak as after
  // the ordinary step's planning; the loop's general body (not its plain path's checks) runs
  // it, the same step.
  s.admits_none = false;
  StepShape shape;
  launch_streak_step<false>(rep_index, s.members, step, shape, 0, true);
  return true;
}

void Simulation::materialize_streaks() {
  for (Replica& rep : m_reps) materialize(rep);
}

void Simulation::check_streak(uint32_t rep_index, const StepShape& shape) const {
  const Replica& rep = m_reps[rep_index];
  const DecodeStreak& s = rep.streak;
  int64_t read = 0, longest = 0, shortest = INT64_MAX, held = 0;
  const std::vector<uint32_t>& running = rep.state.running();
  for (size_t i = 0; i < running.size(); ++i) {
    const Request& r = rep.state.req(running[i]);
    if (i >= static_cast<size_t>(s.members)) {  // admitted in this step
      held += r.kv_held_tokens;
      continue;
    }
    const int64_t context = r.context_tokens + s.steps;  // before this step
    const bool prefilling = context < r.prefill_target;
    if (prefilling || r.generated_tokens + s.steps + 1 > r.spec.output_tokens)
      throw InvariantError(fmt::format(
          "invariant broken in decode streak step {} at {} ns: request {} is {} but in the streak",
          s.steps + 1, m_now.count_ns(), r.spec.id, prefilling ? "prefilling" : "finished"));
    read += context + 1;
    longest = std::max(longest, context + 1);
    shortest = std::min(shortest, context + 1);
    held += member_held(s, r);
  }
  if (read != shape.decode_context_tokens || longest != shape.decode_context_max ||
      shortest != shape.decode_context_min || held != rep.state.kv().used_tokens())
    throw InvariantError(fmt::format(
        "invariant broken in decode streak step {} at {} ns on replica {}: the streak's shape "
        "({} tokens read, longest {}, shortest {}, KV {}) differs from its requests' ({}, {}, "
        "{}, {})",
        s.steps + 1, m_now.count_ns(), rep_index, shape.decode_context_tokens,
        shape.decode_context_max, shape.decode_context_min, rep.state.kv().used_tokens(), read,
        longest, shortest, held));
}

}  // namespace servesim
