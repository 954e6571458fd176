// continuous (Orca's iteration-level scheduling, with Sarathi-Serve / vLLM chunked prefill):
// the batch is re-formed before every step.
//
// Each step is planned in three passes over a token budget of max_num_batched_tokens (no limit
// when unset; a decode costs one token, a prefill chunk its length):
//   1. running requests that are decoding, oldest admission first: each needs KV room for one
//      more token. If the KV manager has none, the newest running request is preempted by
//      recompute (possibly the one asking), and again until the request fits or is itself gone
//      (then the pass ends; an empty plan after a preemption is planned again by the engine);
//   2. running requests whose prefill is unfinished, oldest first: the next chunk, as much of the
//      remaining prefill as the budget allows (preempting newest-first for KV room likewise);
//   3. waiting requests, in `policy` order (first come first served by default; priority, sjf,
//      edf or fair: schedulers/queue_order.h), while fewer than max_num_seqs run and budget
//      is left: a request joins if its whole prefill fits the budget (with chunked_prefill, a
//      first chunk of whatever budget is left) and the KV manager admits it; otherwise admission
//      stops there (head-of-line blocking, as in vLLM). A step that preempted anything admits
//      nothing new: the memory it freed goes to the requests already running.
// Finished requests are released at the end of the step that produced their last token.
// A preemption takes the newest admission (fcfs, fair) or the running request last in the
// queue's order (priority, sjf, edf: the highest key), which may come before the one asking.
// With preemption_mode: swap, a victim that has computed some context and whose KV fits in what
// is left of the host swap space is swapped out instead (its context kept, the transfer time
// added to the step); a swapped request at the front of the queue resumes in pass 3 by copying
// its KV back (the transfer time added to that step) and carries on where it stopped.
// Without chunked_prefill, a prompt longer than max_num_batched_tokens can never run and is
// rejected at arrival; a recompute prefill (prompt plus generated tokens, after a preemption)
// longer than the budget is chunked, since otherwise it could never resume.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/units.h"
#include "schedulers/iteration_level.h"

namespace servesim {
namespace {

class ContinuousScheduler final : public Scheduler {
 public:
  explicit ContinuousScheduler(const ContinuousSettings& c)
      : m_max_seqs(c.max_num_seqs),
        m_max_tokens(c.max_num_batched_tokens),
        m_chunked(c.chunked_prefill),
        m_swap(c.swap),
        m_order(c.order),
        m_fair(c.order) {}

  [[nodiscard]] int64_t max_running() const override { return m_max_seqs; }
  [[nodiscard]] bool priority_order() const override { return m_order.keyed(); }
  [[nodiscard]] int64_t queue_key(const Request& r) const override { return m_order.key(r); }

  // Pass 1 plans every decoding request while the budget lasts, oldest first, and nothing
  // else is planned with an empty queue; fair share charges each step's entries to tenants.
  [[nodiscard]] int64_t repeat_decode_limit() const override {
    return m_order.policy == QueuePolicy::Fair ? 0 : m_max_tokens;
  }

  // Pass 3's first admission as it would go after pass 1's decodes (running().size() of the
  // budget): nothing is admitted when the queue's head would not be.
  [[nodiscard]] bool admits_nothing(SchedulerView& s) const override {
    if (s.waiting().empty() || static_cast<int64_t>(s.running().size()) >= m_max_seqs) return true;
    const int64_t budget = m_max_tokens - static_cast<int64_t>(s.running().size());
    if (budget <= 0) return true;
    const uint32_t slot = s.waiting().front();
    if (s.swapped(slot) || !s.adapter_fits(slot)) return false;  // not worked out here
    Request& r = s.req(slot);
    const int64_t cached = s.kv().cached_prefix_tokens(r);
    int64_t chunk = r.prefill_target - cached;
    if (chunk > budget) {
      if (!m_chunked && chunk <= m_max_tokens) return true;  // waits for a whole budget
      chunk = budget;
    }
    return !s.kv().can_admit(r, cached, cached + chunk);
  }

  // Its KV reads are the head's cached prefix and can_admit.
  [[nodiscard]] bool admits_nothing_as_kv_fills() const override { return true; }

  // Pass 3 alone, as plan_step runs it when pass 1 planned every running request's decode (no
  // preemption, no prefill left). Not with swapping: a swapped request would resume as a
  // decode, which the engine's streak does not take.
  bool plan_admissions(SchedulerView& s, int64_t decodes) override {
    if (m_swap.enabled || m_order.policy == QueuePolicy::Fair) return false;
    m_budget = m_max_tokens - decodes;
    m_preempted = false;
    admit_waiting(s, false);
    return true;
  }

  // Pass 1 after a decode finds no KV (make_room): the victim is the newest admission under
  // first come first served, and a step that preempted admits nothing. Not with swapping.
  [[nodiscard]] bool preempts_newest() const override {
    return !m_swap.enabled && !m_order.keyed() && m_order.policy != QueuePolicy::Fair;
  }

  KvMismatch bind_kv(const KvManager& kv) override {
    if (m_swap.from_kv) {  // sim/scenario_rules.cpp has checked that kv.memory is there
      m_swap.bind(kv.bytes_per_token());
      m_swap.from_kv = false;
    }
    return {};
  }

  void plan_step(SchedulerView& s) override {
    m_budget = m_max_tokens;
    m_preempted = false;
    // Pass 1: decodes. Victims come from the back, so indices before i stay valid.
    // (The hot loop of a run: locals keep the compiler from reloading through aliases.)
    const std::vector<uint32_t>& running = s.running();
    std::vector<StepEntry>& plan = s.plan();
    KvManager& kv = s.kv();
    bool saw_prefill = false;
    size_t i = 0;
    // Decodes only while the batch fits: a step cannot take more decodes than its budget.
    const size_t fast_end =
        static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(running.size()), m_budget));
    // Room made once (the plan keeps its capacity from step to step, so this allocates only
    // while the batch grows); the entries are appended into it (a resize to the most there
    // could be, then written through a pointer, value-initialized every entry first).
    const size_t planned = plan.size();
    plan.reserve(planned + fast_end);
    // The decodes' sums for the step's shape, taken here (the engine then skips these entries).
    int64_t read = 0, longest = 0, shortest = INT64_MAX;
    for (; i < fast_end; ++i) {  // no preemption can happen inside this loop
      const uint32_t slot = running[i];
      Request& r = s.req(slot);
      if (r.prefilling()) {
        saw_prefill = true;
        continue;
      }
      const int64_t next = int64_t{r.context_tokens} + 1;
      if (!kv.grow(r, next)) break;  // needs a preemption: the slow loop
      plan.push_back({slot, EntryKind::Decode, 0});
      read += next;
      longest = std::max(longest, next);
      shortest = std::min(shortest, next);
    }
    if (planned == 0)  // a later preemption, dropping an entry, makes the view forget it
      s.set_decode_run({static_cast<uint32_t>(plan.size()), read, longest, shortest});
    // After a decode that needed a preemption (the KV full: Vidur's saturated replica), the
    // rest one at a time; make_room only where the request's KV must grow (grow() succeeds
    // at once otherwise), the budget in a local around it.
    int64_t budget = m_budget - static_cast<int64_t>(plan.size());
    for (; i < running.size() && budget > 0; ++i) {
      const uint32_t slot = running[i];
      Request& r = s.req(slot);
      if (r.prefilling()) {
        saw_prefill = true;
        continue;
      }
      const int64_t next = int64_t{r.context_tokens} + 1;
      if (next > r.kv_held_tokens) {
        m_budget = budget;
        const bool fits = make_room(s, slot, next, i);
        budget = m_budget;
        if (!fits) break;
      }
      plan.push_back({slot, EntryKind::Decode, 0});
      budget -= 1;
    }
    m_budget = budget;
    const bool scanned_all = i == running.size();
    // Pass 2: unfinished prefills (none when pass 1 saw every request decoding).
    for (i = 0; (saw_prefill || !scanned_all) && i < running.size() && m_budget > 0; ++i) {
      const uint32_t slot = s.running()[i];
      const Request& r = s.req(slot);
      if (!r.prefilling()) continue;
      const int64_t chunk = std::min<int64_t>(r.prefill_target - r.context_tokens, m_budget);
      if (!make_room(s, slot, r.context_tokens + chunk, i)) break;
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(chunk)});
      m_budget -= chunk;
    }
    // Pass 3: admissions.
    const bool fair = m_order.policy == QueuePolicy::Fair;
    if (fair) {
      m_fair.begin_step(s);
      for (const StepEntry& e : s.plan()) m_fair.charge(s, e);
    }
    admit_waiting(s, fair);
  }

  void after_step(SchedulerView& s) override { release_finished(s); }

  std::string never_schedulable(const Request& r) const override {
    if (!m_chunked && r.spec.prompt_tokens > m_max_tokens)
      return fmt::format(
          "its prompt of {} tokens exceeds scheduler.max_num_batched_tokens = {} "
          "and chunked_prefill is off",
          r.spec.prompt_tokens, m_max_tokens);
    return {};
  }

 private:
  // Grows `slot` (running()[i]) to hold `tokens` KV tokens, preempting the policy's victims
  // (the newest admissions, or the least urgent) until it fits, keeping i its index. Returns
  // false if `slot` itself had to be preempted.
  bool make_room(SchedulerView& s, uint32_t slot, int64_t tokens, size_t& i) {
    while (!s.kv().grow(s.req(slot), tokens)) {
      const size_t v = preemption_victim(m_order, s);
      const uint32_t victim = s.running()[v];
      if (v < i) --i;
      preempt(s, victim);
      m_preempted = true;
      refund(s);
      if (victim == slot) return false;
    }
    return true;
  }

  // Pass 3: waiting requests join, in the queue's order, while the budget, max_num_seqs and
  // the KV allow (a step that preempted admits nothing).
  void admit_waiting(SchedulerView& s, bool fair) {
    const std::deque<uint32_t>& waiting = s.waiting();
    while (!m_preempted && !waiting.empty() &&
           static_cast<int64_t>(s.running().size()) < m_max_seqs && m_budget > 0) {
      // Mostly the front (first come first served): a deque's front() is one load, its
      // operator[] and size() a dozen instructions each.
      size_t at = fair ? m_fair.pick(s) : 0;
      uint32_t slot = fair ? waiting[at] : waiting.front();
      // lora.max_loras: pass over a request whose adapter would be one too many (vLLM V1).
      if (!s.adapter_fits(slot)) {
        at = s.next_adapter_fit(0);
        if (at == waiting.size()) break;
        slot = waiting[at];
      }
      Request& r = s.req(slot);
      if (s.swapped(slot)) {
        if (!swap_in(s, at)) break;
        if (fair) m_fair.charge(s, s.plan().back());
        continue;
      }
      const int64_t cached = s.kv().cached_prefix_tokens(r);  // a prefix-cache hit is skipped
      int64_t chunk = r.prefill_target - cached;
      if (chunk > m_budget) {
        const bool must_chunk = m_chunked || chunk > m_max_tokens;  // the latter: a recompute
        if (!must_chunk) break;
        chunk = m_budget;
      }
      if (!s.kv().try_admit(r, cached, cached + chunk)) break;
      s.admit_at(at, cached);
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(chunk)});
      if (fair) m_fair.charge(s, s.plan().back());
      m_budget -= chunk;
    }
  }

  // Swaps the victim out when swapping is on, it has context to keep and host memory has room;
  // otherwise preempts it by recompute.
  void preempt(SchedulerView& s, uint32_t victim) {
    const int64_t context = s.req(victim).context_tokens;
    if (!m_swap.enabled || context == 0 || m_swap_used + context > m_swap.capacity_tokens) {
      s.preempt(victim);
      return;
    }
    s.preempt_swap(victim);
    m_swap_used += context;
    s.add_step_overhead(m_swap.transfer(context));
  }

  // Resumes the swapped request at index `at` of the queue into this step: its next chunk (or
  // decode) under the budget, with its context copied back. False when it cannot join now.
  bool swap_in(SchedulerView& s, size_t at) {
    const uint32_t slot = s.waiting()[at];
    Request& r = s.req(slot);
    int64_t n = r.prefilling() ? r.prefill_target - r.context_tokens : 1;
    if (n > m_budget) {
      if (!m_chunked && n <= m_max_tokens) return false;
      n = m_budget;
    }
    if (!s.kv().try_swap_in(r, r.context_tokens + n)) return false;
    s.swap_in_at(at);
    m_swap_used -= r.context_tokens;
    s.add_step_overhead(m_swap.transfer(r.context_tokens));
    s.plan().push_back(r.prefilling() ? StepEntry{slot, EntryKind::Prefill, static_cast<int32_t>(n)}
                                      : StepEntry{slot, EntryKind::Decode, 0});
    m_budget -= n;
    return true;
  }

  // A preempted request may already have been planned in this step: recount the budget.
  void refund(const SchedulerView& s) {
    if (m_max_tokens == k_unlimited_tokens) return;
    m_budget = m_max_tokens - planned_tokens(s);
  }

  int64_t m_max_seqs;
  int64_t m_max_tokens;
  bool m_chunked;
  SwapSettings m_swap;
  QueueOrder m_order;
  FairShare m_fair;
  int64_t m_swap_used = 0;  // host swap space taken, in KV tokens
  int64_t m_budget = 0;
  bool m_preempted = false;
};

}  // namespace

std::unique_ptr<Scheduler> make_continuous_scheduler(const ContinuousSettings& s) {
  return std::make_unique<ContinuousScheduler>(s);
}

std::unique_ptr<Scheduler> make_continuous(const Cfg& c) {
  ContinuousSettings s;
  s.max_num_seqs = c.get_int("max_num_seqs", {1, 1 << 20});
  const auto max_tokens = c.optional_int("max_num_batched_tokens", {1, int64_t{1} << 40});
  s.chunked_prefill = c.get_bool("chunked_prefill", false);
  if (s.chunked_prefill && !max_tokens)
    c.fail("chunked_prefill",
           "chunked_prefill: true needs scheduler.max_num_batched_tokens, "
           "the chunk budget of a step");
  s.max_num_batched_tokens = max_tokens.value_or(k_unlimited_tokens);
  s.swap = read_swap_settings(c);
  s.order = read_queue_order(c, "policy", queue_policy_names());
  return make_continuous_scheduler(s);
}

SwapSettings read_swap_settings(const Cfg& c) {
  SwapSettings w;
  w.enabled = c.get_choice("preemption_mode", "recompute", {"recompute", "swap"}) == "swap";
  if (!w.enabled) {
    for (const char* key : {"swap_space_gb", "swap_bandwidth_gb_s", "kv_bytes_per_token"})
      if (c.has(key)) c.fail(key, "is only used with preemption_mode: swap");
    return w;
  }
  const double space_gb = plausible_real(c, "swap_space_gb", 4.0, units::k_host_gb);
  w.bandwidth_bytes_per_s = plausible_real(c, "swap_bandwidth_gb_s", units::k_gb_per_s) * 1e9;
  w.space_bytes = space_gb * 1e9;
  // A step moves at most the swap space each way: bounding that time here keeps every step's
  // transfer time far below the simulated clock's headroom (core/time.h).
  if (w.space_bytes / w.bandwidth_bytes_per_s > 1e6)
    c.fail("swap_bandwidth_gb_s",
           fmt::format("moving the whole swap space ({:.4g} GB) at this rate takes {:.4g} s, more "
                       "than the limit of 1e6 s",
                       space_gb, w.space_bytes / w.bandwidth_bytes_per_s));
  // The KV bytes of a token: given here, or (sim/scenario_rules.cpp checks that exactly one is
  // there) from the replica's kv.memory, which may name its model from the catalogue that this
  // library cannot read: the KV manager built from it knows the bytes, and bind_kv takes them.
  if (c.has("kv_bytes_per_token"))
    w.bind(plausible_real(c, "kv_bytes_per_token", units::k_bytes_per_token));
  else
    w.from_kv = true;
  return w;
}

void SwapSettings::bind(double bytes) {
  if (!(bytes > 0))
    throw InputError(
        "scheduler.preemption_mode: swap: this replica's kv section gives "
        "capacity_tokens, so the KV bytes of a token are unknown: give its kv a "
        "memory map, or scheduler.kv_bytes_per_token with no kv.memory anywhere");
  bytes_per_token = bytes;
  // Bounded like the KV capacity (2^50 tokens), so absurd inputs cannot overflow.
  const double tokens = std::floor(space_bytes / bytes);
  capacity_tokens = static_cast<int64_t>(std::min(tokens, 1125899906842624.0));
}

}  // namespace servesim
