// continuous (Orca's iteration-level scheduling, with Sarathi-Serve / vLLM chunked prefill):
// the batch is re-formed before every step.
//
// Each step is planned in three passes over a token budget of max_num_batched_tokens (no limit
// when unset; a decode costs one token, a prefill chunk its length):
//   1. running requests that are decoding, oldest admission first: each needs KV room for one
//      more token. If the KV manager has none, the newest running request is preempted by
//      recompute (possibly the one asking), and again until the request fits or is itself gone;
//   2. running requests whose prefill is unfinished, oldest first: the next chunk, as much of the
//      remaining prefill as the budget allows (preempting newest-first for KV room likewise);
//   3. waiting requests, first come first served, while fewer than max_num_seqs run and budget
//      is left: a request joins if its whole prefill fits the budget (with chunked_prefill, a
//      first chunk of whatever budget is left) and the KV manager admits it; otherwise admission
//      stops there (head-of-line blocking, as in vLLM). A step that preempted anything admits
//      nothing new: the memory it freed goes to the requests already running.
// Finished requests are released at the end of the step that produced their last token.
// Without chunked_prefill, a prompt longer than max_num_batched_tokens can never run and is
// rejected at arrival; a recompute prefill (prompt plus generated tokens, after a preemption)
// longer than the budget is chunked, since otherwise it could never resume.
#include <algorithm>

#include <fmt/format.h>

#include "schedulers/iteration_level.h"

namespace servesim {
namespace {

class ContinuousScheduler final : public Scheduler {
 public:
  explicit ContinuousScheduler(const ContinuousSettings& c)
      : m_max_seqs(c.max_num_seqs), m_max_tokens(c.max_num_batched_tokens),
        m_chunked(c.chunked_prefill) {}

  void plan_step(BatchState& s) override {
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
    const size_t fast_end = static_cast<size_t>(std::min<int64_t>(
        static_cast<int64_t>(running.size()), m_budget));
    for (; i < fast_end; ++i) {  // no preemption can happen inside this loop
      const uint32_t slot = running[i];
      Request& r = s.req(slot);
      if (r.prefilling()) {
        saw_prefill = true;
        continue;
      }
      if (!kv.grow(r, r.context_tokens + 1)) break;  // needs a preemption: the slow loop
      plan.push_back({slot, EntryKind::Decode, 0});
    }
    m_budget -= static_cast<int64_t>(plan.size());
    for (; i < running.size() && m_budget > 0; ++i) {
      const uint32_t slot = running[i];
      Request& r = s.req(slot);
      if (r.prefilling()) {
        saw_prefill = true;
        continue;
      }
      if (!make_room(s, slot, r.context_tokens + 1)) break;
      plan.push_back({slot, EntryKind::Decode, 0});
      m_budget -= 1;
    }
    const bool scanned_all = i == running.size();
    // Pass 2: unfinished prefills (none when pass 1 saw every request decoding).
    for (i = 0; (saw_prefill || !scanned_all) && i < running.size() && m_budget > 0; ++i) {
      const uint32_t slot = s.running()[i];
      const Request& r = s.req(slot);
      if (!r.prefilling()) continue;
      const int64_t chunk = std::min<int64_t>(r.prefill_target - r.context_tokens, m_budget);
      if (!make_room(s, slot, r.context_tokens + chunk)) break;
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(chunk)});
      m_budget -= chunk;
    }
    // Pass 3: admissions.
    while (!m_preempted && !s.waiting().empty() && static_cast<int64_t>(s.running().size()) < m_max_seqs &&
           m_budget > 0) {
      const uint32_t slot = s.waiting().front();
      Request& r = s.req(slot);
      const int64_t cached = s.kv().cached_prefix_tokens(r);  // a prefix-cache hit is skipped
      int64_t chunk = r.prefill_target - cached;
      if (chunk > m_budget) {
        const bool must_chunk = m_chunked || chunk > m_max_tokens;  // the latter: a recompute
        if (!must_chunk) break;
        chunk = m_budget;
      }
      if (!s.kv().try_admit(r, cached, cached + chunk)) break;
      s.admit_front(cached);
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(chunk)});
      m_budget -= chunk;
    }
  }

  void after_step(BatchState& s) override { release_finished(s); }

  std::string never_schedulable(const Request& r) const override {
    if (!m_chunked && r.spec.prompt_tokens > m_max_tokens)
      return fmt::format("its prompt of {} tokens exceeds scheduler.max_num_batched_tokens = {} "
                         "and chunked_prefill is off",
                         r.spec.prompt_tokens, m_max_tokens);
    return {};
  }

 private:
  // Grows `slot` to hold `tokens` KV tokens, preempting the newest running requests until it
  // fits. Returns false if `slot` itself had to be preempted.
  bool make_room(BatchState& s, uint32_t slot, int64_t tokens) {
    while (!s.kv().grow(s.req(slot), tokens)) {
      const uint32_t victim = s.running().back();
      s.preempt(victim);
      m_preempted = true;
      refund(s);
      if (victim == slot) return false;
    }
    return true;
  }

  // A preempted request may already have been planned in this step: recount the budget.
  void refund(const BatchState& s) {
    if (m_max_tokens == k_unlimited_tokens) return;
    m_budget = m_max_tokens - planned_tokens(s);
  }

  int64_t m_max_seqs;
  int64_t m_max_tokens;
  bool m_chunked;
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
    c.fail("chunked_prefill", "chunked_prefill: true needs scheduler.max_num_batched_tokens, "
                              "the chunk budget of a step");
  s.max_num_batched_tokens = max_tokens.value_or(k_unlimited_tokens);
  return make_continuous_scheduler(s);
}

}  // namespace servesim
