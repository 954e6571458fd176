// vllm: vLLM's V1 scheduler as vLLM 0.19 runs it (vllm/v1/core/sched/scheduler.py,
// Scheduler.schedule), with vLLM's own knob names and defaults.
//
// Each step has one budget of max_num_batched_tokens (a decode costs 1 token, a prefill chunk
// its length) and is planned in two passes:
//   1. the running requests, in the order they were admitted, decoding or not: each gets its
//      next token, or its next prefill chunk (the rest of its prefill, capped at
//      long_prefill_token_threshold when that is set, and at the budget left). If the KV manager
//      cannot hold the new tokens, the lowest-priority running request is preempted by
//      recompute (fcfs: the newest admission; priority: the latest arrival, which may already be
//      in the step, whose tokens then go back to the budget), again until the request fits; if
//      it is itself preempted, the pass stops there;
//   2. unless the step preempted anything, the waiting requests, from the front of the queue,
//      while fewer than max_num_seqs run and budget is left: a request skips its cached prefix,
//      takes a first chunk (capped as above), and joins if, with scheduler_reserve_full_isl,
//      its whole prefill fits in the free KV memory, and the KV manager admits the chunk;
//      otherwise admission stops there (head-of-line blocking).
// Prefill is always chunked, as vLLM V1 does for generation. Finished requests are released at the
// end of the step that produced their last token. docs/schedulers.md compares this with
// `continuous`.
//
// async_scheduling (vLLM's --async-scheduling, EngineCore.step_with_batch_queue): vLLM plans a
// step while the previous one runs, before that one's outputs are processed. So when a step
// follows the previous one back to back, its admission pass sees only the requests that had
// arrived when the previous step started, and counts the seats of the requests that finished in
// the previous step as still taken (vLLM frees them when it processes that step's outputs).
// If that leaves the step empty, the engine had nothing to overlap and plans it as usual.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "schedulers/iteration_level.h"

namespace servesim {
namespace {

struct VllmSettings {
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 2048;
  int64_t long_prefill_token_threshold = 0;  ///< 0: off
  bool priority = false;                     ///< scheduling_policy: priority (else fcfs)
  bool reserve_full_isl = true;              ///< scheduler_reserve_full_isl
  bool async_scheduling = false;             ///< plan a step while the previous one runs
};

class VllmScheduler final : public Scheduler {
 public:
  explicit VllmScheduler(const VllmSettings& s) : m_s(s) {}

  [[nodiscard]] int64_t max_running() const override { return m_s.max_num_seqs; }

  void plan_step(SchedulerView& s) override {
    // Planned while the previous step ran (async_scheduling): what arrived since that step
    // started is not seen yet, and the requests it finished still hold their seats.
    const bool overlapped = m_s.async_scheduling && m_ran_before && m_prev_end == s.now();
    const Time seen = overlapped ? m_prev_start : Time::max();
    int64_t budget = m_s.max_num_batched_tokens;
    bool preempted = false;
    for (size_t i = 0; i < s.running().size() && budget > 0;) {
      const uint32_t slot = s.running()[i];
      Request& r = s.req(slot);
      const bool prefill = r.prefilling();
      const int64_t n = std::min(capped(prefill ? r.prefill_target - r.context_tokens : 1), budget);
      bool fits = true;
      while (fits && !s.kv().grow(r, r.context_tokens + n)) {
        const size_t v = victim_index(s);
        const uint32_t victim = s.running()[v];
        budget += tokens_planned_for(s, victim);  // only a priority victim can have any
        if (v < i) --i;
        s.preempt(victim);
        preempted = true;
        fits = victim != slot;
      }
      if (!fits) break;
      s.plan().push_back(prefill ? StepEntry{slot, EntryKind::Prefill, static_cast<int32_t>(n)}
                                 : StepEntry{slot, EntryKind::Decode, 0});
      budget -= n;
      ++i;
    }
    if (!preempted) {  // else the memory it freed goes to the requests already running
      admit(s, budget, seen, overlapped ? m_finished_prev : 0);
      // Nothing to overlap: vLLM plans again once the previous step's outputs are in.
      if (overlapped && s.plan().empty()) admit(s, budget, Time::max(), 0);
    }
    if (!s.plan().empty()) m_prev_start = s.now();  // the step starts now
  }

  void after_step(SchedulerView& s) override {
    m_finished_prev = s.finished_this_step();
    m_prev_end = s.now();
    m_ran_before = true;
    release_finished(s);
  }

 private:
  // The waiting pass: from the queue's front, requests that arrived by `seen` while fewer than
  // max_num_seqs - `held_seats` run and budget is left.
  void admit(SchedulerView& s, int64_t budget, Time seen, int64_t held_seats) {
    while (!s.waiting().empty() && budget > 0 &&
           static_cast<int64_t>(s.running().size()) + held_seats < m_s.max_num_seqs) {
      const uint32_t slot = s.waiting().front();
      Request& r = s.req(slot);
      if (r.spec.arrival > seen) break;
      const int64_t cached = s.kv().cached_prefix_tokens(r);  // a prefix-cache hit is skipped
      const int64_t n = std::min(capped(r.prefill_target - cached), budget);
      if (m_s.reserve_full_isl && !s.kv().can_admit(r, cached, r.prefill_target)) break;
      if (!s.kv().try_admit(r, cached, cached + n)) break;
      s.admit_front(cached);
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(n)});
      budget -= n;
    }
  }

  [[nodiscard]] int64_t capped(int64_t tokens) const {
    const int64_t t = m_s.long_prefill_token_threshold;
    return t > 0 && tokens > t ? t : tokens;
  }

  // fcfs: the newest admission (the back of running). priority: the highest (priority,
  // arrival); every request has priority 0, so the latest arrival, equal arrivals ordered as in
  // the trace (vLLM's arrival times are clock readings, never equal).
  [[nodiscard]] size_t victim_index(const SchedulerView& s) const {
    const std::vector<uint32_t>& running = s.running();
    if (!m_s.priority) return running.size() - 1;
    const auto later = [&](uint32_t a, uint32_t b) {
      const RequestSpec& x = s.req(a).spec;
      const RequestSpec& y = s.req(b).spec;
      return x.arrival != y.arrival ? x.arrival > y.arrival : x.id > y.id;
    };
    size_t best = 0;
    for (size_t j = 1; j < running.size(); ++j)
      if (later(running[j], running[best])) best = j;
    return best;
  }

  [[nodiscard]] static int64_t tokens_planned_for(const SchedulerView& s, uint32_t slot) {
    for (const StepEntry& e : s.plan())
      if (e.slot == slot) return e.kind == EntryKind::Prefill ? e.prefill_tokens : 1;
    return 0;
  }

  VllmSettings m_s;
  // async_scheduling: when the previous step started and ended, and how many it finished.
  Time m_prev_start = Time::max();
  Time m_prev_end = Time::max();
  int32_t m_finished_prev = 0;
  bool m_ran_before = false;
};

}  // namespace

std::unique_ptr<Scheduler> make_vllm(const Cfg& c) {
  VllmSettings s;
  s.max_num_seqs = c.get_int("max_num_seqs", s.max_num_seqs, {1, 1 << 20});
  s.max_num_batched_tokens =
      c.get_int("max_num_batched_tokens", s.max_num_batched_tokens, {1, int64_t{1} << 40});
  s.long_prefill_token_threshold =
      c.get_int("long_prefill_token_threshold", 0, {0, int64_t{1} << 40});
  s.priority = c.get_choice("scheduling_policy", "fcfs", {"fcfs", "priority"}) == "priority";
  s.reserve_full_isl = c.get_bool("scheduler_reserve_full_isl", true);
  s.async_scheduling = c.get_bool("async_scheduling", false);
  // Prefix caching is the KV's (kv.prefix_caching); the scenario checks that the two agree and
  // that kv.policy is paged (sim/scenario_rules.cpp).
  (void)c.get_bool("enable_prefix_caching", true);
  if (s.max_num_batched_tokens < s.max_num_seqs)
    c.fail("max_num_batched_tokens",
           fmt::format("must be at least max_num_seqs ({}), as vLLM requires", s.max_num_seqs));
  return std::make_unique<VllmScheduler>(s);
}

}  // namespace servesim
