#pragma once
// The start of an engine step, inline: Simulation::launch_step (sim/simulation.cpp) and the
// decode streak's loop (sim/decode_streak.cpp), which compiles it in without the branches a
// streak never takes (no verify, no adapters, no offload tiers: Simulation::setup_streaks) and
// without a call a step; and a step's cost books (add_step_cost, also the pipeline engine's).
// Included by those engine files only.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/errors.h"
#include "sim/simulation.h"

namespace servesim {

/// Time::checked_ms with the rounding inline (std::llround was a libm call a step): for
/// 0 <= x <= the limit the truncation is exact, and so is x minus it, so a half rounds up (away
/// from zero) exactly as llround rounds it.
/// step_ns_of gives the nanoseconds in `out` and false for what step_time_of refuses.
[[gnu::always_inline]] inline bool step_ns_of(double ms, int64_t& out) {
  const double ns = ms * 1e6;
  if (!(ms >= 0.0 && ns <= static_cast<double>(Time::limit().count_ns()))) return false;
  const auto whole = static_cast<int64_t>(ns);
  out = whole + (ns - static_cast<double>(whole) >= 0.5 ? 1 : 0);
  return true;
}
inline std::optional<Time> step_time_of(double ms) {
  int64_t ns = 0;
  if (!step_ns_of(ms, ns)) return std::nullopt;
  return Time::ns(ns);
}

template <bool k_streak, bool k_plain>
[[gnu::always_inline]] inline void Simulation::launch(uint32_t rep_index, const StepShape& shape,
                                                      int64_t verify_tokens,
                                                      int32_t prefill_sequences,
                                                      int32_t decode_tokens, bool post_end) {
  Replica& rep = m_reps[rep_index];
  BatchState& state = rep.state;
  // A step always takes time, so simulated time always advances between steps. A streak step
  // of decodes alone is costed inline where its stretch covers it (models/decode_stretch.h).
  std::optional<StepCost> cost;
  if (!(k_streak && prefill_sequences == 0 && rep.streak.stretch.cost(shape, cost.emplace())))
    cost = rep.step_time->cost(shape);
  const double model_ms = cost ? cost->step_ms : rep.step_time->step_ms(shape);
  double step_ms = model_ms;
  if constexpr (!k_streak) {
    // Plus the drafts' proposer, and the step's adapter loads and LoRA GEMMs (sim/lora.h),
    // before and beside the step (summed in this order).
    step_ms =
        model_ms + (verify_tokens > 0 ? m_spec->proposer_ms(*rep.step_time) : 0.0) +
        (m_lora ? m_lora->step_ms(rep_index, state.plan(), state.slots(), cost ? &*cost : nullptr)
                : 0.0);
  }
  // Plus any KV transfer the scheduler added to this step (swap preemption), bounded when the
  // scheduler was built. A step that would end past the clock's limit stops the run (2 compares).
  const std::optional<Time> step = step_time_of(step_ms);
  const Time overhead = state.take_step_overhead();
  std::optional<Time> body = step ? std::optional(std::max(*step, Time::ns(1))) : step;
  // Reloads from the KV offload tiers overlap the step's compute by their rule (kv_tiers.h).
  if constexpr (!k_streak)
    if (body && state.kv().offload()) body = state.kv().offload()->step_with_reload(*body);
  const std::optional<Time> end = body ? m_now.plus_within(*body + overhead) : body;
  if (!end)
    throw InputError(fmt::format(
        "step_time: a step of {:.4g} ms (replica {}, {} sequences, {} prefill tokens) starting at "
        "{:.4g} s of simulated time would end past the simulator's limit of {:.2g} s; the "
        "step-time model or its inputs give steps too long for this workload's arrival times",
        step_ms, rep_index, shape.sequences, shape.prefill_tokens, m_now.seconds(),
        Time::limit_seconds()));
  const Time duration = *end - m_now;
  m_stats.prefill_tokens += shape.prefill_tokens - verify_tokens;
  ReplicaStats& rs = m_stats.replicas[rep_index];  // summed into the totals after the run
  ++rs.steps;
  rs.busy_ns += duration.count_ns();
  rs.seat_steps += shape.sequences;
  if constexpr (!k_streak)  // a streak step's caller reads it where it may have grown
    rs.peak_kv_used_tokens = std::max(rs.peak_kv_used_tokens, state.kv().used_tokens());
  // Activity for the power model (metrics/energy.h): the busier of memory and arithmetic.
  add_step_cost(rs, cost, static_cast<double>(duration.count_ns()) * 1e-9);
  if (!k_plain && rs.pipeline_stages > 0) note_pipeline_step(rep_index, shape, duration);
  rep.busy = true;
  rep.step_end = *end;
  if (post_end) post(Event::step_end(*end, rep_index));
  if (k_plain || !m_step_observers.empty()) {  // k_plain: an end observer
    // A streak step's end goes straight into its observer's array where it has room.
    if (!(k_streak && rep.streak.end_sink.add(end->count_ns()))) {
      const int64_t capacity = state.kv().capacity_tokens();
      for (StepObserver* o : m_end_observers) o->on_step_end(rep_index, *end, capacity);
    }
    if (!k_plain && !m_record_observers.empty())
      notify_record(rep_index, duration, shape, prefill_sequences, decode_tokens,
                    shape.prefill_tokens - verify_tokens, cost);
  }
  if (!k_plain && m_check) check_invariants(rep_index, "after planning");
}

/// A started step's books on its replica (declared in sim/simulation.h).
inline void Simulation::add_step_cost(ReplicaStats& rs, const std::optional<StepCost>& cost,
                                      double busy_s) {
  rs.active_s +=
      cost ? std::min(busy_s, std::max(cost->ideal_ms_bandwidth, cost->ideal_ms_compute) * 1e-3)
           : busy_s;
  if (!cost) return;
  ++rs.costed_steps;
  rs.bandwidth_bound_steps += cost->bandwidth_bound;
  rs.bytes_moved += cost->bytes;
  rs.flops += cost->flops;
  m_stats.peak_bytes_per_s = cost->peak_bytes_per_s;
  m_stats.peak_flops_per_s = cost->peak_flops_per_s;
}

}  // namespace servesim
