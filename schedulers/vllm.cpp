// vllm: vLLM's V1 scheduler as vLLM 0.19 runs it (version 0.8 and later; V0 before, below)
// (vllm/v1/core/sched/scheduler.py, Scheduler.schedule), with vLLM's own knob names and defaults.
//
// Each step has one budget of max_num_batched_tokens (a decode costs 1 token, a prefill chunk
// its length) and is planned in two passes:
//   1. the running requests, in the order they were admitted, decoding or not: each gets its
//      next token, or its next prefill chunk (the rest of its prefill, capped at
//      long_prefill_token_threshold when that is set, and at the budget left). If the KV manager
//      cannot hold the new tokens, the lowest-priority running request is preempted by
//      recompute (fcfs: the newest admission; priority: the highest (priority, arrival, id),
//      which may already be in the step, whose tokens then go back to the budget), again until
//      the request fits; if it is itself preempted, the pass stops there (priority: when that
//      leaves the step empty while others run, the step is planned again, as vLLM's engine
//      calls schedule() again at once);
//   2. unless the step preempted anything, the waiting requests, from the front of the queue
//      (fcfs: arrival order, preempted requests first; priority: (priority, arrival, id) order,
//      a preempted request back at its place, as vLLM's heap of waiting requests),
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
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/engine_versions.h"
#include "schedulers/iteration_level.h"
#include "schedulers/vllm_defaults.h"

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
  [[nodiscard]] bool priority_order() const override { return m_s.priority; }
  // A decode's verify takes 1 + k of the budget and KV slots for 1 + k tokens (vLLM's
  // lookahead slots); the slots of rejected drafts stay held and the next verify reuses them.
  [[nodiscard]] bool speculative_decoding() const override { return true; }

  void plan_step(SchedulerView& s) override {
    // Planned while the previous step ran (async_scheduling): what arrived since that step
    // started is not seen yet, and the requests it finished still hold their seats.
    const bool overlapped = m_s.async_scheduling && m_ran_before && m_prev_end == s.now();
    const Time seen = overlapped ? m_prev_start : Time::max();
    int64_t budget = m_s.max_num_batched_tokens;
    bool preempted = running_pass(s, budget);
    // priority: a request that preempts itself stops the pass, and when it was the first, the
    // step is empty while others still run. vLLM's engine then calls schedule() again at once:
    // planned afresh, the others use the memory it freed. (fcfs preempts from the back, so a
    // request that preempts itself first runs alone: this never happens there.)
    while (preempted && s.plan().empty() && !s.running().empty()) {
      budget = m_s.max_num_batched_tokens;
      preempted = running_pass(s, budget);
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
  // The running pass: each running request's next token or chunk within `budget`, preempting
  // while it cannot get KV. True when it preempted anything.
  bool running_pass(SchedulerView& s, int64_t& budget) {
    bool preempted = false;
    for (size_t i = 0; i < s.running().size() && budget > 0;) {
      const uint32_t slot = s.running()[i];
      Request& r = s.req(slot);
      const bool prefill = r.prefilling();
      const int64_t n = prefill ? std::min(capped(r.prefill_target - r.context_tokens), budget)
                                : std::min<int64_t>(s.decode_tokens(r), budget);
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
      // A verify short of budget checks fewer drafts, as vLLM trims a request's spec tokens.
      s.plan().push_back(prefill ? StepEntry{slot, EntryKind::Prefill, static_cast<int32_t>(n)}
                                 : decode_entry(slot, n));
      budget -= n;
      ++i;
    }
    return preempted;
  }

  // The waiting pass: from the queue's front, requests that arrived by `seen` while fewer than
  // max_num_seqs - `held_seats` run and budget is left.
  void admit(SchedulerView& s, int64_t budget, Time seen, int64_t held_seats) {
    while (!s.waiting().empty() && budget > 0 &&
           static_cast<int64_t>(s.running().size()) + held_seats < m_s.max_num_seqs) {
      size_t at = first_seen(s, seen);
      // lora.max_loras: pass over a request whose adapter would be one too many (vLLM V1's
      // skipped_waiting_requests); it keeps its place.
      while (at < s.waiting().size() && !s.adapter_fits(s.waiting()[at]))
        at = first_seen(s, seen, at + 1);
      if (at == s.waiting().size()) break;
      const uint32_t slot = s.waiting()[at];
      Request& r = s.req(slot);
      const int64_t cached = s.kv().cached_prefix_tokens(r);  // a prefix-cache hit is skipped
      const int64_t n = std::min(capped(r.prefill_target - cached), budget);
      if (m_s.reserve_full_isl && !s.kv().can_admit(r, cached, r.prefill_target)) break;
      if (!s.kv().try_admit(r, cached, cached + n)) break;
      s.admit_at(at, cached);
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(n)});
      budget -= n;
    }
  }

  // The first waiting request that arrived by `seen`, or waiting().size(). fcfs looks at the
  // front only: a front not yet seen stops admission. priority: vLLM's heap does not hold the
  // requests that arrived after the plan started, so the first seen one in (priority, arrival,
  // id) order is next (with equal priorities the queue is in arrival order: the front again).
  // From index `from` on (after requests passed over for lora.max_loras).
  [[nodiscard]] size_t first_seen(const SchedulerView& s, Time seen, size_t from = 0) const {
    const std::deque<uint32_t>& w = s.waiting();
    if (from >= w.size()) return w.size();
    if (!m_s.priority || seen == Time::max())
      return s.req(w[from]).spec.arrival > seen ? w.size() : from;
    for (size_t i = from; i < w.size(); ++i)
      if (s.req(w[i]).spec.arrival <= seen) return i;
    return w.size();
  }

  [[nodiscard]] int64_t capped(int64_t tokens) const {
    const int64_t t = m_s.long_prefill_token_threshold;
    return t > 0 && tokens > t ? t : tokens;
  }

  // fcfs: the newest admission (the back of running). priority: the highest (priority,
  // arrival, id): the least urgent, latest arrival, equal arrivals ordered as in the trace
  // (vLLM's arrival times are clock readings, never equal).
  [[nodiscard]] size_t victim_index(const SchedulerView& s) const {
    const std::vector<uint32_t>& running = s.running();
    if (!m_s.priority) return running.size() - 1;
    const auto later = [&](uint32_t a, uint32_t b) {
      const RequestSpec& x = s.req(a).spec;
      const RequestSpec& y = s.req(b).spec;
      if (x.priority != y.priority) return x.priority > y.priority;
      return x.arrival != y.arrival ? x.arrival > y.arrival : x.id > y.id;
    };
    const auto latest = std::max_element(running.begin(), running.end(),
                                         [&](uint32_t a, uint32_t b) { return later(b, a); });
    return static_cast<size_t>(latest - running.begin());
  }

  [[nodiscard]] static int64_t tokens_planned_for(const SchedulerView& s, uint32_t slot) {
    for (const StepEntry& e : s.plan())
      if (e.slot == slot) return e.tokens();
    return 0;
  }

  VllmSettings m_s;
  // async_scheduling: when the previous step started and ended, and how many it finished.
  Time m_prev_start = Time::max();
  Time m_prev_end = Time::max();
  int32_t m_finished_prev = 0;
  bool m_ran_before = false;
};

// ---- V0 (vLLM before 0.8) ----------------------------------------------------------------
//
// vLLM V0's Scheduler (vllm/core/scheduler.py, as in 0.6.6): `_schedule_default` without chunked
// prefill, `_schedule_chunked_prefill` with it, and multi-step scheduling (num_scheduler_steps).
//   default: the waiting requests first, each with its whole prompt, while fewer than
//     max_num_seqs run, the prompts fit in max_num_batched_tokens and the KV manager can hold the
//     whole prompt (head-of-line blocking); a step that admits any runs prefills only. Otherwise
//     every running request decodes, preempting the newest admission by recompute while a
//     decode cannot get KV.
//   chunked: the running decodes first, then the running prefills' next chunks, then the
//     waiting requests' first chunks, all within max_num_batched_tokens; a request is given KV
//     for its whole prompt when it joins (V0's block manager allocates the prompt at once).
//   multi-step (num_scheduler_steps N > 1, default policy only): a decode step starts a group of
//     N steps planned at once, each sequence given KV for N tokens (vLLM's N - 1 lookahead
//     slots); no request joins until the group ends, a sequence that finishes mid-group keeps its
//     seat (padding) until then, and the group's tokens reach the client when it ends.
struct VllmV0Settings {
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 2048;
  bool chunked = false;         ///< enable_chunked_prefill
  int32_t scheduler_steps = 1;  ///< num_scheduler_steps
};

class VllmV0Scheduler final : public Scheduler {
 public:
  explicit VllmV0Scheduler(const VllmV0Settings& s) : m_s(s) {}

  [[nodiscard]] int64_t max_running() const override { return m_s.max_num_seqs; }

  [[nodiscard]] std::string never_schedulable(const Request& r) const override {
    if (m_s.chunked || r.spec.prompt_tokens <= m_s.max_num_batched_tokens) return {};
    return fmt::format(
        "prompt of {} tokens exceeds max_num_batched_tokens {} (vLLM V0 without "
        "chunked prefill ignores such a prompt)",
        r.spec.prompt_tokens, m_s.max_num_batched_tokens);
  }

  void plan_step(SchedulerView& s) override {
    if (m_group_left > 0) {  // the group planned at its first step goes on
      // A sequence whose client left mid-group (the engine's abandonment) is no longer running.
      for (uint32_t slot : m_group)
        if (running(s.req(slot)))
          s.plan().push_back(
              {slot, s.req(slot).done() ? EntryKind::Padding : EntryKind::Decode, 0});
      return;
    }
    if (m_s.chunked) {
      plan_chunked(s);
      return;
    }
    int64_t budget = m_s.max_num_batched_tokens;
    admit(s, budget, false);
    if (!s.plan().empty()) return;  // prefills only
    bool preempted = false;
    for (size_t i = 0; i < s.running().size();)
      if (!plan_running(s, i, budget, preempted)) break;
    if (m_s.scheduler_steps > 1 && !s.plan().empty()) {
      m_group_left = m_s.scheduler_steps;
      m_group.clear();
      for (const StepEntry& e : s.plan()) m_group.push_back(e.slot);
    }
  }

  void after_step(SchedulerView& s) override {
    if (m_group_left > 0 && --m_group_left > 0) return;  // the group has steps to go
    if (m_group.empty()) {
      release_finished(s);
      return;
    }
    // The group's tokens reach the client when it ends: a sequence that finished mid-group has
    // its last token delivered and its seat freed now.
    for (uint32_t slot : m_group)
      if (running(s.req(slot)) && s.req(slot).done()) s.req(slot).last_token = s.now();
    m_group.clear();
    for (size_t i = 0; i < s.running().size();) {
      const uint32_t slot = s.running()[i];
      if (s.req(slot).done())
        s.release(slot);
      else
        ++i;
    }
  }

 private:
  // V0 chunked: decodes first, then the running prefills' chunks, then new requests.
  void plan_chunked(SchedulerView& s) {
    int64_t budget = m_s.max_num_batched_tokens;
    bool preempted = false;
    for (const bool prefills : {false, true})
      for (size_t i = 0; i < s.running().size() && budget > 0;) {
        if (s.req(s.running()[i]).prefilling() != prefills) {
          ++i;
          continue;
        }
        if (!plan_running(s, i, budget, preempted)) break;
      }
    admit(s, budget, true);  // V0 admits even in a step that preempted
  }

  // Plans running()[i]'s next token or chunk, preempting the newest admissions by recompute
  // while it cannot get KV; advances i past it. False when it was itself preempted.
  bool plan_running(SchedulerView& s, size_t& i, int64_t& budget, bool& preempted) {
    const uint32_t slot = s.running()[i];
    Request& r = s.req(slot);
    const bool prefill = r.prefilling();
    const int64_t n = prefill ? std::min<int64_t>(r.prefill_target - r.context_tokens, budget) : 1;
    // Multi-step: KV for the group's tokens (the lookahead slots), up to the request's last
    // token (vLLM, not knowing the reply's length, reserves all N).
    const int64_t want =
        prefill ? r.context_tokens + n
                : std::max<int64_t>(r.context_tokens + 1,
                                    std::min<int64_t>(r.context_tokens + m_s.scheduler_steps,
                                                      r.peak_kv_tokens()));
    while (!s.kv().grow(r, want)) {
      const uint32_t victim = s.running().back();
      budget += tokens_planned(s, victim);
      s.preempt(victim);
      preempted = true;
      if (victim == slot) return false;
    }
    s.plan().push_back(prefill ? StepEntry{slot, EntryKind::Prefill, static_cast<int32_t>(n)}
                               : StepEntry{slot, EntryKind::Decode, 0});
    budget -= n;
    ++i;
    return true;
  }

  // The waiting requests from the queue's front: each needs a seat, KV for its whole prompt
  // and (unchunked) its whole prompt within the budget, else admission stops there.
  void admit(SchedulerView& s, int64_t& budget, bool chunk) {
    while (!s.waiting().empty() && budget > 0 &&
           static_cast<int64_t>(s.running().size()) < m_s.max_num_seqs) {
      // lora.max_loras (V0's rule): pass over a request whose adapter would be one too many.
      const size_t at = s.next_adapter_fit(0);
      if (at == s.waiting().size()) break;
      const uint32_t slot = s.waiting()[at];
      Request& r = s.req(slot);
      const int64_t cached = s.kv().cached_prefix_tokens(r);
      const int64_t whole = r.prefill_target - cached;
      // A recompute longer than the budget (a preempted request's prompt plus its tokens) runs
      // alone rather than never: vLLM would drop it as too long.
      const bool alone = !chunk && whole > m_s.max_num_batched_tokens && s.plan().empty();
      if (!chunk && whole > budget && !alone) break;
      if (!s.kv().try_admit(r, cached, r.prefill_target)) break;
      const int64_t n = chunk ? std::min(whole, budget) : whole;
      s.admit_at(at, cached);
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(n)});
      budget -= std::min(n, budget);
      if (alone) break;
    }
  }

  /// Still in the batch: running, or finished and not yet released.
  [[nodiscard]] static bool running(const Request& r) {
    return r.state == RequestState::Running || r.state == RequestState::Finished;
  }

  [[nodiscard]] static int64_t tokens_planned(const SchedulerView& s, uint32_t slot) {
    for (const StepEntry& e : s.plan())
      if (e.slot == slot) return e.tokens();
    return 0;
  }

  VllmV0Settings m_s;
  int32_t m_group_left = 0;       ///< steps of the multi-step group still to run (this one too)
  std::vector<uint32_t> m_group;  ///< the group's sequences, in plan order
};

/// vLLM's version from `version` (core/engine_versions.h: a known MAJOR.MINOR, any patch);
/// models/host_time.cpp reads the same key the same way.
std::pair<int, int> read_vllm_version(const Cfg& c) {
  const EngineVersion v = read_engine_version(c, "vllm");
  return {v.major, v.minor};
}

std::unique_ptr<Scheduler> make_vllm_v0(const Cfg& c, std::pair<int, int> v) {
  const std::string name = fmt::format("vLLM {}.{} (V0)", v.first, v.second);
  for (const char* key :
       {"long_prefill_token_threshold", "scheduler_reserve_full_isl", "async_scheduling", "usage"})
    if (c.has(key))
      c.fail(key, fmt::format("{} has no {}: servesim models it for V1 (version 0.8 and later)",
                              name, key));
  if (c.get_choice("scheduling_policy", "fcfs", {"fcfs", "priority"}) == "priority")
    c.fail("scheduling_policy",
           fmt::format("{}: only fcfs is modelled for V0 (priority is modelled for V1, version "
                       "0.8 and later)",
                       name));
  VllmV0Settings s;
  s.chunked = c.get_bool("enable_chunked_prefill", false);
  if (c.has("num_scheduler_steps")) {
    if (v.first == 0 && v.second < 6)
      c.fail("num_scheduler_steps", fmt::format("{} has no multi-step scheduling: it came with "
                                                "vLLM 0.6.0 (versions 0.6 and 0.7 have it)",
                                                name));
    s.scheduler_steps = static_cast<int32_t>(c.get_int("num_scheduler_steps", 1, {1, 1024}));
    if (s.scheduler_steps > 1 && s.chunked)
      c.fail("num_scheduler_steps",
             "multi-step scheduling with enable_chunked_prefill is not modelled (vLLM 0.6.0 "
             "refused the pair): give one of them");
  }
  s.max_num_seqs = c.get_int("max_num_seqs", s.max_num_seqs, {1, 1 << 20});
  s.max_num_batched_tokens =
      c.get_int("max_num_batched_tokens", s.max_num_batched_tokens, {1, int64_t{1} << 40});
  (void)c.get_bool("enable_prefix_caching", false);  // checked against kv (scenario_rules.cpp)
  if (s.max_num_batched_tokens < s.max_num_seqs)
    c.fail("max_num_batched_tokens",
           fmt::format("must be at least max_num_seqs ({}), as vLLM requires", s.max_num_seqs));
  return std::make_unique<VllmV0Scheduler>(s);
}

}  // namespace

std::unique_ptr<Scheduler> make_vllm(const Cfg& c, const AcceleratorInfo& accelerator) {
  const std::pair<int, int> version = read_vllm_version(c);
  if (version.first == 0 && version.second < 8) return make_vllm_v0(c, version);
  if (c.has("num_scheduler_steps"))
    c.fail("num_scheduler_steps",
           fmt::format("vLLM {}.{} (V1) has no multi-step scheduling: it is V0's (versions 0.6 "
                       "and 0.7; give version: \"0.6.6\")",
                       version.first, version.second));
  if (!c.get_bool("enable_chunked_prefill", true))
    c.fail("enable_chunked_prefill",
           fmt::format("vLLM {}.{} (V1) is modelled with chunked prefill only (its default); "
                       "prefill-only steps are V0's (give a version before 0.8)",
                       version.first, version.second));
  VllmSettings s;
  // Left out, the batch limits are what vLLM derives at start-up (schedulers/vllm_defaults.h).
  const VllmUsage usage =
      c.get_choice("usage", "api_server", {"api_server", "llm_class"}) == "llm_class"
          ? VllmUsage::LlmClass
          : VllmUsage::ApiServer;
  const VllmBatchDefaults d =
      vllm_batch_defaults(version.first, version.second, accelerator, usage);
  s.max_num_seqs = c.get_int("max_num_seqs", d.max_num_seqs, {1, 1 << 20});
  s.max_num_batched_tokens =
      c.get_int("max_num_batched_tokens", d.max_num_batched_tokens, {1, int64_t{1} << 40});
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
