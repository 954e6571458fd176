// sglang: SGLang's scheduler (python/sglang/srt/managers/scheduler.py, get_next_batch_to_run,
// with its PrefillAdder and ScheduleBatch.retract_decode), with SGLang's knob names and defaults.
//
// Prefill first. Before every step the policy tries to form a prefill batch; if it can, that
// batch is the step and the running requests do not decode in it. Otherwise every running request
// decodes. With enable_mixed_chunk the running requests decode in the same step as the prefill
// batch, whose budgets then shrink by one token per decode, as SGLang's mixed chunk does.
//
// A prefill batch has two token budgets: max_prefill_tokens and chunked_prefill_size (none when
// -1). First the request whose prompt is being chunked gets its next chunk (the rest of its
// prefill, cut to the chunk budget). Then waiting requests, in schedule_policy order (fcfs: the
// queue; lpm: the longest cached prefix first, ties in queue order, fcfs when more than 128 wait;
// lof: the longest output (max new tokens) first, ties in queue order; dfs-weight: a depth-first
// walk of the cached prefixes, schedulers/sglang_dfs.h; with enable_priority_scheduling, fcfs and
// lof order by the request's priority first, the highest value first unless
// schedule_low_priority_values_first) join while fewer than max_running_requests run:
//   - memory estimate: it needs extend + min(remaining output, 4096) tokens (extend = prefill
//     tokens not cached), which must be less than the free KV (as the batch's first new request
//     found it; the step's decodes and chunk already hold their room) minus what is promised:
//     new_token_ratio x min(remaining output, 4096) of every running request, the chunked
//     request's min(output, 4096), and what each request that joined this batch needed. Otherwise
//     admission stops. (An empty engine takes the head of the queue whatever the estimate, so a
//     request that fits alone always runs.)
//   - budget: if extend exceeds what is left of max_prefill_tokens and the batch already has a
//     request, admission stops; if it exceeds the chunk budget, it takes a chunk of that size
//     and closes the batch (it will be the chunked request of the next prefill batch);
//   - the KV manager must hold its chunk (prefix-cache hits are skipped).
// Decode: every running request that is not prefilling gets one more token. If KV runs out, it
// retracts (preempts by recompute) running requests, the one with the fewest output tokens first,
// ties to the longest prompt, then the newest: at least one, then more while the free KV is less
// than retract_decode_steps tokens per request still running (and more than one runs). After a
// retraction new_token_ratio is reset to min(1, (output tokens so far + retract_decode_steps x
// running requests) / (their output lengths)); after a decode step without one it decays by
// (init - min) / new_token_ratio_decay_steps down to the minimum; an empty engine resets it to
// its initial value. init = min(1, init_new_token_ratio x schedule_conservativeness), min =
// init x min_new_token_ratio_factor. A request's "max new tokens" is its output length in the
// trace. docs/schedulers.md compares this with `continuous`.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/units.h"
#include "schedulers/iteration_level.h"
#include "schedulers/sglang_dfs.h"

namespace servesim {
namespace {

constexpr int64_t k_clip_max_new_tokens = 4096;  // SGLang's CLIP_MAX_NEW_TOKENS_ESTIMATION
constexpr size_t k_lpm_queue_limit = 128;        // above this lpm falls back to fcfs, as SGLang

struct SglangSettings {
  int64_t chunked_prefill_size = 8192;  ///< k_unlimited_tokens when -1 (no chunking)
  int64_t max_prefill_tokens = 16384;
  int64_t max_running_requests = int64_t{1} << 20;
  bool mixed_chunk = false;
  bool lpm = false;
  bool lof = false;            ///< schedule_policy: lof
  bool dfs = false;            ///< schedule_policy: dfs-weight
  bool priority = false;       ///< enable_priority_scheduling
  int64_t priority_sign = -1;  ///< +1 with schedule_low_priority_values_first, else -1
  double init_ratio = 0.7;
  double min_ratio = 0.098;
  double ratio_decay = (0.7 - 0.098) / 600;
  int64_t retract_decode_steps = 20;
};

class SglangScheduler final : public Scheduler {
 public:
  explicit SglangScheduler(const SglangSettings& s) : m_s(s), m_ratio(s.init_ratio) {}

  [[nodiscard]] int64_t max_running() const override { return m_s.max_running_requests; }
  // A decode's verify takes KV for its draft tokens (SGLang allocates them for the verify);
  // decodes do not draw on the prefill budgets, with or without speculation.
  [[nodiscard]] bool speculative_decoding() const override { return true; }

  void plan_step(SchedulerView& s) override {
    if (s.running().empty()) m_ratio = m_s.init_ratio;
    m_retracted = false;
    if (m_s.mixed_chunk) {
      const int64_t decodes = plan_decodes(s);
      if (!m_retracted) plan_prefill(s, decodes);
      if (decodes > 0) update_ratio(s);
      return;
    }
    if (plan_prefill(s, 0)) return;
    if (plan_decodes(s) > 0) update_ratio(s);
  }

  void after_step(SchedulerView& s) override { release_finished(s); }

 private:
  [[nodiscard]] static int64_t max_new(const Request& r) {
    return std::min<int64_t>(r.spec.output_tokens - r.generated_tokens, k_clip_max_new_tokens);
  }

  // Adds a prefill batch to the plan; `decodes` running requests decode beside it (mixed chunk).
  // Returns whether it added any prefill.
  bool plan_prefill(SchedulerView& s, int64_t decodes) {
    int64_t input_budget = m_s.max_prefill_tokens - decodes;
    int64_t chunk_budget = m_s.chunked_prefill_size == k_unlimited_tokens
                               ? k_unlimited_tokens
                               : m_s.chunked_prefill_size - decodes;
    double promised = 0;  // KV tokens promised beyond what is allocated now
    bool added = false;
    for (size_t i = 0; i < s.running().size(); ++i) {  // the chunked request, if any
      const uint32_t slot = s.running()[i];
      Request& r = s.req(slot);
      if (!r.prefilling()) {
        promised += m_ratio * static_cast<double>(max_new(r));
        continue;
      }
      const int64_t rest = r.prefill_target - r.context_tokens;
      const int64_t n = std::min(rest, chunk_budget);
      if (n <= 0 || !grow_or_retract(s, slot, r.context_tokens + n)) return added;
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(n)});
      // Still chunking, or memory was short: nothing else joins this batch.
      if (n < rest || m_retracted) return true;
      added = true;
      input_budget -= n;
      chunk_budget -= n;
      promised += static_cast<double>(max_new(r));
    }
    // Free KV as the batch's new requests found it: what they join with is in `promised`.
    const double free_tokens = static_cast<double>(s.kv().free_tokens());
    if (m_s.dfs && !s.waiting().empty()) m_dfs.compute(s);  // once a batch, as SGLang sorts
    while (!s.waiting().empty() && input_budget > 0 && chunk_budget > 0 &&
           static_cast<int64_t>(s.running().size()) < m_s.max_running_requests) {
      const size_t at = pick(s);
      if (at == s.waiting().size()) break;
      const uint32_t slot = s.waiting()[at];
      // max_loras_per_batch: a request whose adapter would be one too many with the running
      // batch's closes the batch.
      s.count_running_adapters();
      if (!s.adapter_fits(slot)) break;
      Request& r = s.req(slot);
      const int64_t cached = s.kv().cached_prefix_tokens(r);
      const int64_t extend = r.prefill_target - cached;
      const double total = static_cast<double>(extend + max_new(r));
      const double left = free_tokens - promised;
      if (!s.running().empty() && total >= left) break;  // SGLang's NO_TOKEN
      if (extend > input_budget && added) break;
      const int64_t n = std::min(extend, chunk_budget);
      if (!s.kv().try_admit(r, cached, cached + n)) break;
      s.admit_at(at, cached);
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(n)});
      added = true;
      if (n < extend) break;  // the new chunked request closes the batch
      input_budget -= n;
      chunk_budget -= n;
      promised += total;
    }
    return added;
  }

  // Plans a decode for every running request past its prefill, retracting on KV exhaustion.
  // Returns how many it planned.
  int64_t plan_decodes(SchedulerView& s) {
    for (size_t i = 0; i < s.running().size(); ++i) {
      const uint32_t slot = s.running()[i];
      if (s.req(slot).prefilling()) continue;
      if (s.kv().grow(s.req(slot), s.req(slot).context_tokens + s.decode_tokens(s.req(slot))))
        continue;
      retract_for_decode(s);
      i = static_cast<size_t>(-1);  // start again: the survivors may still need room
    }
    int64_t n = 0;
    for (const uint32_t slot : s.running()) {
      if (s.req(slot).prefilling()) continue;
      s.plan().push_back(decode_entry(slot, s.decode_tokens(s.req(slot))));
      ++n;
    }
    return n;
  }

  // Grows `slot` for a prefill chunk, retracting others if KV runs out (the admission estimate
  // makes this rare). False if `slot` itself had to go.
  bool grow_or_retract(SchedulerView& s, uint32_t slot, int64_t tokens) {
    while (!s.kv().grow(s.req(slot), tokens)) {
      const uint32_t victim = s.running()[victim_index(s)];
      retract(s, victim);
      if (victim == slot) return false;
    }
    return true;
  }

  // ScheduleBatch.retract_decode: at least one, then while free KV is short of
  // retract_decode_steps per remaining request; then the ratio is re-estimated.
  void retract_for_decode(SchedulerView& s) {
    do {
      retract(s, s.running()[victim_index(s)]);
    } while (s.running().size() > 1 &&
             s.kv().free_tokens() <
                 static_cast<int64_t>(s.running().size()) * m_s.retract_decode_steps);
    int64_t decoded = 0, max_new_total = 0;
    for (const uint32_t slot : s.running()) {
      decoded += s.req(slot).generated_tokens;
      max_new_total += s.req(slot).spec.output_tokens;
    }
    const double estimate =
        static_cast<double>(decoded +
                            m_s.retract_decode_steps * static_cast<int64_t>(s.running().size())) /
        static_cast<double>(std::max<int64_t>(max_new_total, 1));
    m_ratio = std::min(1.0, estimate);
  }

  void retract(SchedulerView& s, uint32_t slot) {
    s.preempt(slot);
    m_retracted = true;
  }

  void update_ratio(const SchedulerView& /*s*/) {
    if (!m_retracted) m_ratio = std::max(m_ratio - m_s.ratio_decay, m_s.min_ratio);
  }

  // The running request to retract first: fewest output tokens, then longest prompt, then newest.
  [[nodiscard]] static size_t victim_index(const SchedulerView& s) {
    const std::vector<uint32_t>& run = s.running();
    const auto first = [&](uint32_t a, uint32_t b) {
      const Request& x = s.req(a);
      const Request& y = s.req(b);
      if (x.generated_tokens != y.generated_tokens) return x.generated_tokens < y.generated_tokens;
      if (x.spec.prompt_tokens != y.spec.prompt_tokens)
        return x.spec.prompt_tokens > y.spec.prompt_tokens;
      return x.admission_seq > y.admission_seq;
    };
    size_t best = 0;
    for (size_t j = 1; j < run.size(); ++j)
      if (first(run[j], run[best])) best = j;
    return best;
  }

  // The waiting request to consider next: the front (fcfs), the longest cached prefix (lpm), the
  // longest output (lof; SGLang sorts its queue by -max_new_tokens, stably), the next of the
  // depth-first walk (dfs-weight); with priorities, fcfs and lof by (sign x priority, their own
  // order) (SGLang's _sort_by_priority_and_fcfs and _sort_by_longest_output).
  [[nodiscard]] size_t pick(SchedulerView& s) const {
    const auto& q = s.waiting();
    if (m_s.dfs) return m_dfs.next(s);
    if (m_s.priority) {
      size_t best = 0;
      const auto rank = [&](size_t j) {
        const Request& r = s.req(q[j]);
        return std::pair{m_s.priority_sign * r.spec.priority,
                         m_s.lof ? -r.spec.output_tokens : int64_t{0}};
      };
      for (size_t j = 1; j < q.size(); ++j)
        if (rank(j) < rank(best)) best = j;
      return best;
    }
    if (m_s.lof) {
      size_t longest = 0;
      for (size_t j = 1; j < q.size(); ++j)
        if (s.req(q[j]).spec.output_tokens > s.req(q[longest]).spec.output_tokens) longest = j;
      return longest;
    }
    if (!m_s.lpm || q.size() > k_lpm_queue_limit) return 0;
    size_t best = 0;
    int64_t best_hit = -1;
    for (size_t j = 0; j < q.size(); ++j) {
      const int64_t hit = s.kv().cached_prefix_tokens(s.req(q[j]));
      if (hit > best_hit) {
        best_hit = hit;
        best = j;
      }
    }
    return best;
  }

  SglangSettings m_s;
  DfsWeightOrder m_dfs;
  double m_ratio;
  bool m_retracted = false;
};

}  // namespace

std::unique_ptr<Scheduler> make_sglang(const Cfg& c) {
  SglangSettings s;
  const int64_t chunk =
      c.get_int("chunked_prefill_size", s.chunked_prefill_size, {-1, int64_t{1} << 40});
  if (chunk == 0) c.fail("chunked_prefill_size", "must be -1 (no chunking) or at least 1");
  s.chunked_prefill_size = chunk == -1 ? k_unlimited_tokens : chunk;
  s.max_prefill_tokens =
      c.get_int("max_prefill_tokens", s.max_prefill_tokens, {1, int64_t{1} << 40});
  s.max_running_requests =
      c.get_int("max_running_requests", s.max_running_requests, {1, int64_t{1} << 20});
  s.mixed_chunk = c.get_bool("enable_mixed_chunk", false);
  if (s.mixed_chunk && chunk == -1)
    c.fail("enable_mixed_chunk", "needs chunked prefill (chunked_prefill_size is -1), as SGLang");
  if (c.has("schedule_policy") && c.is_scalar("schedule_policy")) {
    const std::string p = c.get_string("schedule_policy");
    if (p == "random")
      c.fail("schedule_policy",
             "random is SGLang's but not modelled (servesim's schedules are deterministic); the "
             "modelled ones are fcfs, lpm, lof and dfs-weight");
  }
  const std::string policy =
      c.get_choice("schedule_policy", "fcfs", {"fcfs", "lpm", "lof", "dfs-weight"});
  s.lpm = policy == "lpm";
  s.lof = policy == "lof";
  s.dfs = policy == "dfs-weight";
  s.priority = c.get_bool("enable_priority_scheduling", false);
  if (s.priority && (s.lpm || s.dfs))
    c.fail("enable_priority_scheduling",
           fmt::format("SGLang's {} order does not read priorities (only fcfs and lof do): use "
                       "schedule_policy fcfs or lof, or drop enable_priority_scheduling",
                       policy));
  if (c.has("schedule_low_priority_values_first") && !s.priority)
    c.fail("schedule_low_priority_values_first", "is only used with enable_priority_scheduling");
  s.priority_sign = c.get_bool("schedule_low_priority_values_first", false) ? 1 : -1;
  const double conservativeness =
      plausible_real(c, "schedule_conservativeness", 1.0, units::k_factor);
  const double init = c.get_real("init_new_token_ratio", 0.7, {0.0, 1.0, true});
  const double factor = c.get_real("min_new_token_ratio_factor", 0.14, {0.0, 1.0, false});
  const int64_t decay_steps = c.get_int("new_token_ratio_decay_steps", 600, {1, int64_t{1} << 40});
  s.retract_decode_steps = c.get_int("retract_decode_steps", 20, {1, 1 << 20});
  s.init_ratio = std::min(1.0, init * conservativeness);
  s.min_ratio = std::min(1.0, s.init_ratio * factor);
  s.ratio_decay = (s.init_ratio - s.min_ratio) / static_cast<double>(decay_steps);
  return std::make_unique<SglangScheduler>(s);
}

}  // namespace servesim
