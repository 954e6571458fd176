// Pipeline parallelism in the engine (sim/pipeline_engine.h, docs/parallelism.md): the books of
// a pipelined replica's steps, and with pipeline_schedule: micro_batches its batches in flight.
#include "sim/pipeline_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/config.h"
#include "core/errors.h"
#include "sim/simulation.h"
#include "sim/step_launch.h"

namespace servesim {

void Simulation::setup_pipelines() {
  size_t most = 0;
  for (size_t i = 0; i < m_reps.size(); ++i) {
    const PipelineInfo info = m_reps[i].step_time->pipeline();
    if (info.stages <= 0) continue;
    const auto p = static_cast<size_t>(info.stages);
    ReplicaStats& rs = m_stats.replicas[i];
    rs.pipeline_stages = info.stages;
    rs.micro_batches = info.micro_batches;
    rs.stage_busy_ns.assign(p, 0);
    most = std::max(most, p);
    if (!info.micro_batches) continue;
    // What the engine's micro-batches do not model is refused with the config's key by
    // check_pipeline_schedule; this is the engine's own guard.
    if (m_transfers || m_spec || m_lora || m_admission || m_autoscale || m_failures ||
        m_reps[i].state.kv().offload())
      throw std::logic_error(
          "pipeline_schedule: micro_batches with a feature it does not model (see "
          "check_pipeline_schedule)");
    if (m_pipes.empty()) m_pipes.resize(m_reps.size());
    ReplicaPipeline& pp = m_pipes[i];
    pp.stage_free.assign(p, Time::ns(0));
    pp.stage_time.assign(p, Time::ns(0));
    pp.ring.resize(p);
    for (PipelineBatch& b : pp.ring) b.entries.reserve(1024);
    pp.all_running.reserve(1024);
    pp.merged.reserve(1024);
  }
  for (size_t i = 0; !m_pipes.empty() && i < m_reps.size(); ++i)
    if (m_pipes[i].ring.empty())
      throw std::logic_error(
          "pipeline_schedule: micro_batches on some replicas only (every replica needs it)");
  m_stage_ms.assign(most, 0.0);
}

void Simulation::note_pipeline_step(uint32_t rep, const StepShape& shape, Time duration) {
  ReplicaStats& rs = m_stats.replicas[rep];
  const int32_t m = m_reps[rep].step_time->pipeline_stage_ms(shape, m_stage_ms);
  for (size_t k = 0; k < rs.stage_busy_ns.size(); ++k)
    rs.stage_busy_ns[k] += static_cast<int64_t>(m_stage_ms[k] * 1e6 + 0.5);
  rs.micro_batch_ns += static_cast<double>(m) * static_cast<double>(duration.count_ns());
}

void Simulation::pipeline_refresh(uint32_t rep) {
  m_reps[rep].busy = !m_pipes[rep].can_start(m_now);
}

namespace {

/// Puts the batches in flight back into `running` after the scheduler planned without them:
/// the order is the one before planning (admission order), less what the scheduler took out,
/// then what it admitted. `all` holds running() as it was before the batches were hidden.
void restore_running(ReplicaPipeline& pp, std::vector<uint32_t>& running) {
  for (uint32_t s : running) pp.mark[s] = 1;
  pp.merged.clear();
  for (uint32_t s : pp.all_running)
    if (pp.in_flight[s] || pp.mark[s] == 1) {
      pp.merged.push_back(s);
      pp.mark[s] = 2;
    }
  for (uint32_t s : running)
    if (pp.mark[s] == 1) pp.merged.push_back(s);
  for (uint32_t s : pp.merged) pp.mark[s] = 0;
  running.swap(pp.merged);
}

}  // namespace

void Simulation::pipeline_start(uint32_t rep_index) {
  Replica& rep = m_reps[rep_index];
  ReplicaPipeline& pp = m_pipes[rep_index];
  if (!pp.can_start(m_now)) return;
  BatchState& state = rep.state;
  const size_t slots = state.slots().size();
  if (pp.in_flight.size() < slots) {  // grows with the most requests held, as the slots do
    pp.in_flight.resize(slots, 0);
    pp.mark.resize(slots, 0);
  }
  // The scheduler sees only the requests in no batch in flight.
  std::vector<uint32_t>& running = state.mutable_running();
  if (pp.count > 0) {
    pp.all_running.assign(running.begin(), running.end());
    std::erase_if(running, [&pp](uint32_t s) { return pp.in_flight[s] != 0; });
  }
  const int64_t preempted_before = state.preemptions();
  rep.scheduler->plan_step(state);
  if (pp.count > 0) {
    if (pp.in_flight.size() < state.slots().size()) {
      pp.in_flight.resize(state.slots().size(), 0);
      pp.mark.resize(state.slots().size(), 0);
    }
    restore_running(pp, running);
  }
  const Time wake = state.take_wake();
  std::vector<StepEntry>& plan = state.plan();
  if (plan.empty()) {
    on_empty_plan(rep_index, state.preemptions() != preempted_before, wake);
    return;
  }
  StepShape shape;
  const RequestSlots& reqs = state.slots();
  int64_t longest = 0, shortest = INT64_MAX;
  int32_t prefill_sequences = 0, decode_tokens = 0;
  for (const StepEntry& e : plan) {
    if (pp.in_flight[e.slot])
      throw InvariantError(
          fmt::format("request {} planned on replica {} while a batch in flight holds it",
                      reqs[e.slot].spec.id, rep_index));
    pp.in_flight[e.slot] = 1;
    const Request& r = reqs[e.slot];
    if (e.kind == EntryKind::Prefill) {
      shape.prefill_tokens += e.prefill_tokens;
      shape.prefill_tokens_sq += static_cast<double>(e.prefill_tokens) * e.prefill_tokens;
      shape.prefill_context_tokens += r.context_tokens;
      ++prefill_sequences;
      continue;
    }
    const int64_t read = int64_t{r.context_tokens} + (e.kind == EntryKind::Decode ? 1 : 0);
    ++shape.decode_sequences;
    decode_tokens += e.kind == EntryKind::Decode ? 1 : 0;
    shape.decode_context_tokens += read;
    longest = std::max(longest, read);
    shortest = std::min(shortest, read);
  }
  shape.decode_context_max = longest;
  shape.decode_context_min = shape.decode_sequences > 0 ? shortest : 0;
  shape.sequences = static_cast<int32_t>(plan.size());

  // The batch's timeline: each stage FIFO, entered when the batch left the one before.
  (void)rep.step_time->pipeline_stage_ms(shape, m_stage_ms);
  const Time overhead = state.take_step_overhead();  // swap preemption: before stage 0
  ReplicaStats& rs = m_stats.replicas[rep_index];
  Time at = m_now;
  int64_t stage_ns = 0;
  for (size_t k = 0; k < pp.stage_free.size(); ++k) {
    const std::optional<Time> t = Time::checked_ms(m_stage_ms[k]);
    const std::optional<Time> end =
        t ? std::max(at, pp.stage_free[k])
                .plus_within(std::max(*t, Time::ns(1)) + (k == 0 ? overhead : Time::ns(0)))
          : t;
    if (!end)
      throw InputError(fmt::format(
          "step_time: stage {} of a batch of {} sequences ({:.4g} ms) starting at {:.4g} s of "
          "simulated time would end past the simulator's limit of {:.2g} s",
          k, shape.sequences, m_stage_ms[k], m_now.seconds(), Time::limit_seconds()));
    const Time took = *end - std::max(at, pp.stage_free[k]);
    rs.stage_busy_ns[k] += took.count_ns();
    stage_ns += took.count_ns();
    pp.stage_free[k] = at = *end;
  }
  PipelineBatch& batch = pp.ring[(pp.head + pp.count) % pp.ring.size()];
  ++pp.count;
  batch.exit = at;
  batch.entries.swap(plan);  // the plan is now the empty vector the batch held

  const Time duration = at - m_now;  // the batch's trip through every stage
  const std::optional<StepCost> cost = rep.step_time->cost(shape);
  m_stats.prefill_tokens += shape.prefill_tokens;
  ++rs.steps;
  rs.busy_ns += (at - std::max(m_now, pp.last_exit)).count_ns();  // time with a batch in flight
  pp.last_exit = at;
  rs.seat_steps += shape.sequences;
  rs.micro_batch_ns += static_cast<double>(duration.count_ns());
  rs.peak_kv_used_tokens = std::max(rs.peak_kv_used_tokens, state.kv().used_tokens());
  // Each stage's accelerators are active for their stage's time, at most its share of the work.
  const double stage_s =
      static_cast<double>(stage_ns) * 1e-9 / static_cast<double>(pp.stage_free.size());
  add_step_cost(rs, cost, stage_s);
  post(Event::step_end(at, rep_index));
  if (pp.stage_free[0] < at) post(Event::timer(pp.stage_free[0], rep_index));  // stage 0 frees
  pipeline_refresh(rep_index);
  if (!m_step_observers.empty())
    notify_step(rep_index, duration, shape, prefill_sequences, decode_tokens, shape.prefill_tokens,
                cost);
  if (m_check) check_invariants(rep_index, "after planning");
}

void Simulation::pipeline_step_end(uint32_t rep) {
  ReplicaPipeline& pp = m_pipes[rep];
  PipelineBatch& batch = pp.ring[pp.head];
  if (pp.count == 0 || batch.exit != m_now)
    throw InvariantError(fmt::format(
        "replica {}: a batch left its last stage at {} ns out of order", rep, m_now.count_ns()));
  for (const StepEntry& e : batch.entries) pp.in_flight[e.slot] = 0;
  m_reps[rep].state.plan().swap(batch.entries);  // finish_step credits and clears it
  pp.head = (pp.head + 1) % static_cast<uint32_t>(pp.ring.size());
  --pp.count;
  finish_step(rep);
  pipeline_refresh(rep);
  if (!m_reps[rep].busy) schedule(rep);
}

void check_pipeline_schedule(const Cfg& root, const Components& c) {
  const bool micro = std::any_of(c.replicas.begin(), c.replicas.end(), [](const ReplicaParts& r) {
    return r.step_time && r.step_time->pipeline().micro_batches;
  });
  if (!micro) return;
  const char* with = nullptr;
  if (!c.pools.empty())
    with = "cluster.pools";
  else if (c.speculative)
    with = "speculative decoding";
  else if (c.lora)
    with = "a lora section";
  else if (c.admission)
    with = "admission or abandonment";
  else if (c.autoscale)
    with = "cluster.autoscale";
  else if (c.failures)
    with = "cluster.failures";
  else if (std::any_of(c.replicas.begin(), c.replicas.end(),
                       [](const ReplicaParts& r) { return r.kv && r.kv->offload(); }))
    with = "kv.offload";
  if (!with) return;
  const std::string why = fmt::format(
      "micro_batches is not modelled with {} (docs/parallelism.md); use closed_form", with);
  if (root.is_scalar("step_time")) root.fail("step_time", why);
  root.child("step_time").fail("pipeline_schedule", why);
}

std::optional<PipelineSummary> pipeline_summary(const std::vector<ReplicaStats>& replicas) {
  std::optional<PipelineSummary> s;
  double busy = 0, capacity = 0, in_flight = 0, worked = 0;
  std::vector<double> stage;
  for (const ReplicaStats& r : replicas) {
    if (r.pipeline_stages <= 0) continue;
    if (!s) {
      s.emplace();
      s->schedule = r.micro_batches ? "micro_batches" : "closed_form";
    }
    s->stages = std::max(s->stages, r.pipeline_stages);
    stage.resize(std::max(stage.size(), r.stage_busy_ns.size()), 0.0);
    const auto b = static_cast<double>(r.busy_ns);
    busy += b;
    capacity += b * r.pipeline_stages;
    in_flight += r.micro_batch_ns;
    for (size_t k = 0; k < r.stage_busy_ns.size(); ++k) {
      stage[k] += static_cast<double>(r.stage_busy_ns[k]);
      worked += static_cast<double>(r.stage_busy_ns[k]);
    }
  }
  if (!s || busy <= 0) return s;
  s->micro_batches_in_flight = in_flight / busy;
  s->bubble = std::max(0.0, 1.0 - worked / capacity);
  for (double x : stage) s->stage_busy.push_back({x / busy});
  return s;
}

}  // namespace servesim
