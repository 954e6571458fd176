// The engine's decode streaks (sim/decode_streak.h).
#include "sim/decode_streak.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/simulation.h"
#include "sim/step_launch.h"

namespace servesim {

namespace {

/// The most tokens per block a streak counts boundaries for (one counter per token of a block).
constexpr int64_t k_max_streak_block = 4096;

int64_t round_up(int64_t tokens, int64_t block) { return (tokens + block - 1) / block * block; }

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
    s.block = kv.block_tokens();
    s.boundaries.assign(static_cast<size_t>(s.block), 0);
  }
}

bool Simulation::capture_streak(Replica& rep) {
  DecodeStreak& s = rep.streak;
  const std::vector<Request>& reqs = rep.state.slots();
  std::fill(s.boundaries.begin(), s.boundaries.end(), 0);
  int64_t sum = 0, longest = 0, shortest = INT64_MAX, left = INT64_MAX;
  for (uint32_t slot : rep.state.running()) {
    const Request& r = reqs[slot];
    // A member finishing in some step leaves the streak at that step's end (leave_streak).
    const int64_t member_left = r.spec.output_tokens - r.generated_tokens;
    if (member_left < 1 || r.state != RequestState::Running || r.prefilling() ||
        r.spec.cancel_after_tokens > 0)
      return false;
    const int64_t first = r.kv_held_tokens - r.context_tokens + 1;  // its first new block
    if (first < 1 || first > s.block) return false;
    ++s.boundaries[static_cast<size_t>(first % s.block)];
    sum += r.context_tokens;
    longest = std::max<int64_t>(longest, r.context_tokens);
    shortest = std::min<int64_t>(shortest, r.context_tokens);
    left = std::min<int64_t>(left, member_left);
  }
  s.active = true;
  s.in_flight = false;
  s.steps = 0;
  s.members = static_cast<int64_t>(rep.state.running().size());
  s.context_sum = sum;
  s.context_max = longest;
  s.context_min = shortest;
  s.left_min = left;
  ++m_active_streaks;
  return true;
}

// The body of a streak's next step, shared by its first (start_streak_step) and the loop.
[[gnu::always_inline]] inline bool Simulation::next_streak_step(uint32_t rep_index, int64_t n,
                                                                bool waiting) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  BatchState& state = rep.state;
  // Every member has a token left to produce in this step (s.left_min > s.steps: one that
  // produces its last leaves at the step's end, leave_streak).
  const int64_t step = s.steps + 1;
  const int32_t blocks = s.boundaries[static_cast<size_t>(step % s.block)];
  if (blocks > 0 && !state.kv().take_blocks(blocks)) {
    materialize(rep);  // near capacity: the scheduler preempts as it always does
    return false;
  }
  // A queue the step would take from (its head fits what is left): the ordinary way.
  if (waiting && !rep.scheduler->admits_nothing(state)) {
    if (blocks > 0) (void)state.kv().take_blocks(-blocks);
    materialize(rep);
    return false;
  }
  s.in_flight = true;
  ++m_stats.streak_steps;
  // Each member reads its context at the capture, the steps since, and the token it computes.
  StepShape shape;
  shape.sequences = static_cast<int32_t>(n);
  shape.decode_sequences = static_cast<int32_t>(n);
  shape.decode_context_tokens = s.context_sum + n * step;
  shape.decode_context_max = s.context_max + step;
  shape.decode_context_min = s.context_min + step;
  if (m_check) check_streak(rep_index, shape);
  launch<true>(rep_index, shape, 0, 0, static_cast<int32_t>(n), false);
  return true;
}

bool Simulation::streak_step(uint32_t rep_index) {
  if (!start_streak_step(rep_index)) return false;
  // Steps that end before anything else happens end here, one after another, as the event
  // loop would end them (dispatch: the clock, finish_step, schedule -> try_start_step ->
  // start_streak_step): no event, no queue. A step that would not (another event first or at
  // the same instant, the time limit, an interrupt) or in which a member produces its last
  // token gets its end event; so does every
  // k_inline_steps-th, so that the event loop's checks still run now and then. Nothing in the
  // loop posts an event or changes the queue of waiting requests or the running batch, so the
  // first queued event's time and whether anyone waits are read once.
  constexpr int k_inline_steps = 1024;
  Replica& rep = m_reps[rep_index];
  BatchState& state = rep.state;
  const Time next_event = m_events.empty() ? Time::max() : m_events.top().time();
  const bool waiting = !state.waiting().empty();
  const auto n = static_cast<int64_t>(state.running().size());
  DecodeStreak& s = rep.streak;
  for (int k = 0; k < k_inline_steps; ++k) {
    // This step ends first: strictly before every queued event, within the limits.
    const Time end = rep.step_end;
    // A step in which members produce their last token ends by its event too: they depart
    // there, as after an ordinary step (the parallel engine keys what is recorded by the event
    // running), and may make requests ready (a session's next turn).
    if (!(end < next_event) || end > m_limits.max_sim_time ||
        (m_limits.interrupt && *m_limits.interrupt) || rep.schedule_posted ||
        s.steps + 1 == s.left_min)
      break;
    m_now = end;
    m_stats.end = end;
    state.set_now(end);
    end_streak_step(rep_index);  // no member leaves in it (checked above)
    // The next step (start_streak_step's checks but those that cannot change here: the batch's
    // size and the capture).
    if (!next_streak_step(rep_index, n, waiting)) return false;
  }
  post(Event::step_end(rep.step_end, rep_index));
  return true;
}

bool Simulation::start_streak_step(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  BatchState& state = rep.state;
  const auto n = static_cast<int64_t>(state.running().size());
  // What the scheduler's promise needs (Scheduler::repeat_decode_limit).
  if (n == 0 || n > s.limit) {
    materialize(rep);
    return false;
  }
  if (!s.active && !capture_streak(rep)) return false;
  return next_streak_step(rep_index, n, !state.waiting().empty());
}

bool Simulation::end_streak_step(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  ++s.steps;
  s.in_flight = false;
  s.last_end = m_now;
  const bool left = s.steps == s.left_min;
  if (left)
    leave_streak(rep_index);
  else
    rep.state.set_finished_this_step(0);  // the scheduler's after_step has nothing to do
  rep.busy = false;
  if (m_check) check_invariants(rep_index, "after the step");
  return left;
}

void Simulation::leave_streak(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  DecodeStreak& s = rep.streak;
  BatchState& state = rep.state;
  std::vector<Request>& reqs = state.mutable_slots();
  const Time now = m_now;
  // One walk: the members whose last token this step produced are written back and finished
  // as finish_step credits a decode; the others' capture figures are summed again without them.
  int32_t finished = 0;
  int64_t sum = 0, longest = 0, shortest = INT64_MAX, left = INT64_MAX;
  for (uint32_t slot : state.running()) {
    Request& r = reqs[slot];
    const int64_t member_left = r.spec.output_tokens - r.generated_tokens;  // at the capture
    if (member_left != s.steps) {
      sum += r.context_tokens;
      longest = std::max<int64_t>(longest, r.context_tokens);
      shortest = std::min<int64_t>(shortest, r.context_tokens);
      left = std::min(left, member_left);
      continue;
    }
    const int64_t first = r.kv_held_tokens - r.context_tokens + 1;  // as capture_streak counted
    --s.boundaries[static_cast<size_t>(first % s.block)];
    r.kv_held_tokens = streak_held(rep, r);
    r.context_tokens += static_cast<int32_t>(s.steps);
    r.generated_tokens += static_cast<int32_t>(s.steps);
    if (r.first_token == Time::max()) r.first_token = now;
    r.last_token = now;
    r.state = RequestState::Finished;
    r.finish = now;
    ++finished;
  }
  // The scheduler releases them (its promise: it does nothing else, Scheduler::
  // repeat_decode_limit), and they depart in its order, as after an ordinary step.
  state.set_finished_this_step(finished);
  rep.scheduler->after_step(state);
  for (uint32_t slot : state.departed()) depart(rep_index, slot);
  state.departed().clear();
  s.members = static_cast<int64_t>(state.running().size());
  if (s.members == 0) {
    s.active = false;
    --m_active_streaks;
    return;
  }
  s.context_sum = sum;
  s.context_max = longest;
  s.context_min = shortest;
  s.left_min = left;
}

int64_t Simulation::streak_held(const Replica& rep, const Request& r) const {
  const DecodeStreak& s = rep.streak;
  if (!s.active) return r.kv_held_tokens;
  const int64_t grown = r.context_tokens + s.steps + (s.in_flight ? 1 : 0);
  return std::max(r.kv_held_tokens, round_up(grown, s.block));
}

void Simulation::materialize(Replica& rep) {
  DecodeStreak& s = rep.streak;
  if (!s.active) return;
  // Written back before its first step (the queue's head fits, or the KV runs short): every
  // member is as at the capture, holding whole blocks that cover its context (so streak_held is
  // what it holds), and there is nothing to write.
  if (s.steps > 0 || s.in_flight) {
    std::vector<Request>& reqs = rep.state.mutable_slots();
    std::vector<StepEntry>& plan = rep.state.plan();
    for (uint32_t slot : rep.state.running()) {
      Request& r = reqs[slot];
      r.kv_held_tokens = streak_held(rep, r);
      r.context_tokens += static_cast<int32_t>(s.steps);
      r.generated_tokens += static_cast<int32_t>(s.steps);
      if (s.steps > 0) r.last_token = s.last_end;
      // The step in flight is the scheduler's plan of decodes: the step end credits it.
      if (s.in_flight) plan.push_back({slot, EntryKind::Decode, 0});
    }
  }
  s.active = false;
  s.in_flight = false;
  --m_active_streaks;
}

void Simulation::materialize_streaks() {
  for (Replica& rep : m_reps) materialize(rep);
}

void Simulation::check_streak(uint32_t rep_index, const StepShape& shape) const {
  const Replica& rep = m_reps[rep_index];
  const DecodeStreak& s = rep.streak;
  int64_t read = 0, longest = 0, shortest = INT64_MAX, held = 0;
  for (uint32_t slot : rep.state.running()) {
    const Request& r = rep.state.req(slot);
    const int64_t context = r.context_tokens + s.steps;  // before this step
    if (r.prefilling() || r.generated_tokens + s.steps + 1 > r.spec.output_tokens)
      throw InvariantError(fmt::format(
          "invariant broken in decode streak step {} at {} ns: request {} is {} but in the streak",
          s.steps + 1, m_now.count_ns(), r.spec.id, r.prefilling() ? "prefilling" : "finished"));
    read += context + 1;
    longest = std::max(longest, context + 1);
    shortest = std::min(shortest, context + 1);
    held += streak_held(rep, r);
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
