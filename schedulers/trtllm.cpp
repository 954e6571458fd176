// trtllm: TensorRT-LLM's in-flight batching (batch_manager's CapacityScheduler and
// MicroBatchScheduler), with TensorRT-LLM's knob names and defaults.
//
// The capacity scheduler decides which requests may hold KV; the micro-batch scheduler fills each
// step under max_num_tokens (a generation request costs 1 token, a context chunk its length).
// Each step is planned in three passes:
//   1. generation (decoding) requests, oldest admission first: one token each. If the KV manager
//      has no room, the newest running request is paused (preempted by recompute) until it
//      fits; under GUARANTEED_NO_EVICT this never happens, since admission kept room for every
//      running request's whole output;
//   2. context (prefilling) requests already running, oldest first: the rest of the context if
//      it fits the budget left, otherwise (enable_chunked_context) a chunk of the budget rounded
//      down to a multiple of the KV block size (kv.block_size, TensorRT-LLM's tokens_per_block);
//      only a context's last chunk may be shorter;
//   3. unless the step paused anything, waiting requests, first come first served (with
//      `priorities`, by the request's priority, then first come first served: the order of
//      TensorRT-LLM's executor queue, insertRequestInOrder, for Request::priority), while fewer
//      than max_batch_size run: a first chunk as in pass 2 (a request whose context does not fit
//      the budget without chunking waits), and capacity_scheduler_policy decides:
//        GUARANTEED_NO_EVICT: its whole KV (prompt plus output, kv footprint) must fit in the free
//          KV minus what the running requests will still need to reach theirs;
//        MAX_UTILIZATION: the KV manager must hold what this step computes (pass 1 pauses later).
//      Otherwise admission stops there (head-of-line blocking).
// With `priorities`, pass 1's pausing takes the least urgent running request (lowest priority,
// then the latest arrival), as pausing from the back of TensorRT-LLM's priority-sorted list does.
// Without enable_chunked_context a prompt longer than max_num_tokens is rejected at arrival.
// A request's maximum output is kv.max_output_tokens when given, else its output length in the
// trace (kv footprint). With trtllm_bench_tuning, max_batch_size and max_num_tokens not given are
// chosen at the first step as trtllm-bench does (schedulers/trtllm.h), from the requests of the
// mean lengths that the KV pool holds. docs/schedulers.md compares this with `continuous`.
#include "schedulers/trtllm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "schedulers/iteration_level.h"
#include "schedulers/queue_order.h"

namespace servesim {
namespace {

struct TrtllmSettings {
  bool no_evict = true;  ///< GUARANTEED_NO_EVICT (else MAX_UTILIZATION)
  int64_t max_batch_size = 2048;
  int64_t max_num_tokens = 8192;
  bool chunked = false;  ///< enable_chunked_context
  /// priorities: 0 none (arrival order), -1 highest_first (TensorRT-LLM's meaning of
  /// Request::priority), +1 lowest_first (the workload's column read as vLLM's)
  int priority_sign = 0;
  int64_t block = 16;  ///< chunk unit: the replica's kv.block_size (bind_kv)
  /// trtllm_bench_tuning: the dataset's mean lengths and pipeline stages; each of
  /// max_batch_size and max_num_tokens that was not given is tuned at the first step.
  struct Tuning {
    double input_tokens = 0, output_tokens = 0;
    int64_t pipeline_parallel = 1;
    bool batch = false, tokens = false;  ///< which limits to tune
  };
  std::optional<Tuning> tuning;
};

class TrtllmScheduler final : public Scheduler {
 public:
  explicit TrtllmScheduler(const TrtllmSettings& s) : m_s(s) {}

  [[nodiscard]] int64_t max_running() const override { return m_s.max_batch_size; }
  [[nodiscard]] bool priority_order() const override { return m_s.priority_sign != 0; }
  [[nodiscard]] int64_t queue_key(const Request& r) const override {
    return m_s.priority_sign * int64_t{r.spec.priority};
  }
  // Draft tokens count against max_num_tokens as the verify's query tokens do in TensorRT-LLM.
  [[nodiscard]] bool speculative_decoding() const override { return true; }

  void plan_step(SchedulerView& s) override {
    if (m_s.tuning) tune(s.kv().capacity_tokens());
    m_budget = m_s.max_num_tokens;
    m_paused = false;
    // With priorities a pause may take a request before i (or i itself): the pass then starts
    // again, past the requests it has planned.
    const bool by_priority = m_s.priority_sign != 0;
    bool again = false;
    for (size_t i = 0; i < s.running().size() && m_budget > 0; ++i) {  // 1. generation
      const uint32_t slot = s.running()[i];
      if (s.req(slot).prefilling() || (again && planned(s, slot))) continue;
      const int64_t n = std::min<int64_t>(s.decode_tokens(s.req(slot)), m_budget);  // 1 + drafts
      const size_t running = s.running().size();
      const bool fits = make_room(s, slot, s.req(slot).context_tokens + n);
      if (fits) {
        s.plan().push_back(decode_entry(slot, n));
        m_budget -= n;
      }
      if (by_priority && s.running().size() != running) {
        again = true;
        i = static_cast<size_t>(-1);
      } else if (!fits) {
        break;
      }
    }
    for (size_t i = 0; i < s.running().size() && m_budget > 0; ++i) {  // 2. context chunks
      const uint32_t slot = s.running()[i];
      const Request& r = s.req(slot);
      if (!r.prefilling()) continue;
      const int64_t n = chunk(r.prefill_target - r.context_tokens, true);
      if (n == 0) break;
      const bool fits = make_room(s, slot, r.context_tokens + n);
      if (fits) {
        s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(n)});
        m_budget -= n;
      }
      if (!fits || (by_priority && m_paused)) break;
    }
    while (!m_paused && !s.waiting().empty() && m_budget > 0 &&  // 3. admission
           static_cast<int64_t>(s.running().size()) < m_s.max_batch_size) {
      const uint32_t slot = s.waiting().front();
      // The PEFT cache's device slots: a request whose adapter does not fit stops admission.
      if (!s.adapter_fits(slot)) break;
      Request& r = s.req(slot);
      const int64_t cached = s.kv().cached_prefix_tokens(r);
      const int64_t n = chunk(r.prefill_target - cached, false);
      if (n == 0) break;
      if (m_s.no_evict && s.kv().footprint_tokens(r) > s.kv().free_tokens() - still_needed(s))
        break;
      if (!s.kv().try_admit(r, cached, cached + n)) break;
      s.admit_front(cached);
      s.plan().push_back({slot, EntryKind::Prefill, static_cast<int32_t>(n)});
      m_budget -= n;
    }
  }

  void after_step(SchedulerView& s) override { release_finished(s); }

  KvMismatch bind_kv(const KvManager& kv) override {
    m_s.block = kv.block_tokens();
    if (m_s.chunked && m_s.max_num_tokens < m_s.block)
      return {"max_num_tokens", fmt::format("must be at least kv.block_size ({}) with "
                                            "enable_chunked_context: chunks are whole blocks",
                                            m_s.block)};
    return {};
  }

  std::string never_schedulable(const Request& r) const override {
    if (!m_s.chunked && r.spec.prompt_tokens > m_s.max_num_tokens)
      return fmt::format(
          "its prompt of {} tokens exceeds scheduler.max_num_tokens = {} and "
          "enable_chunked_context is off",
          r.spec.prompt_tokens, m_s.max_num_tokens);
    return {};
  }

 private:
  // The part of a context of `rest` tokens this step computes, 0 when it must wait. A context
  // that has already started (a recompute longer than the budget, too) is chunked anyway.
  [[nodiscard]] int64_t chunk(int64_t rest, bool started) const {
    if (rest <= m_budget) return rest;
    if (!m_s.chunked && !(started || rest > m_s.max_num_tokens)) return 0;
    const int64_t n = m_budget / m_s.block * m_s.block;
    return n > 0 ? n : (m_s.chunked ? 0 : m_budget);
  }

  [[nodiscard]] static bool planned(const SchedulerView& s, uint32_t slot) {
    return std::any_of(s.plan().begin(), s.plan().end(),
                       [slot](const StepEntry& e) { return e.slot == slot; });
  }

  // KV the running requests will still take to reach their full footprint.
  [[nodiscard]] static int64_t still_needed(const SchedulerView& s) {
    int64_t need = 0;
    for (const uint32_t slot : s.running()) {
      const Request& r = s.req(slot);
      need += std::max<int64_t>(s.kv().footprint_tokens(r) - r.kv_held_tokens, 0);
    }
    return need;
  }

  // Grows `slot` to `tokens`, pausing the newest running requests (with priorities, the least
  // urgent) until it fits. False if `slot` itself was paused.
  bool make_room(SchedulerView& s, uint32_t slot, int64_t tokens) {
    static const QueueOrder k_by_priority{QueuePolicy::Priority};
    while (!s.kv().grow(s.req(slot), tokens)) {
      const uint32_t victim = m_s.priority_sign != 0
                                  ? s.running()[preemption_victim(k_by_priority, s)]
                                  : s.running().back();
      s.preempt(victim);
      m_paused = true;
      m_budget = m_s.max_num_tokens - planned_tokens(s);  // it may have been planned already
      if (victim == slot) return false;
    }
    return true;
  }

  // trtllm-bench sizes its KV estimate as the whole memory left by the weights; here the KV pool
  // the run was given stands for it (the same figure with free_gpu_memory_fraction 0.95 and no
  // reserve). Once only: the pool does not change.
  void tune(int64_t kv_capacity_tokens) {
    const TrtllmSettings::Tuning t = *m_s.tuning;
    m_s.tuning.reset();
    const double requests =
        static_cast<double>(kv_capacity_tokens) / (t.input_tokens + t.output_tokens);
    if (requests < 1)
      throw InputError(fmt::format(
          "scheduler.trtllm_bench_tuning: the KV pool of {} tokens holds no request of the mean "
          "lengths ({} + {} tokens); trtllm-bench refuses such a model and mapping",
          kv_capacity_tokens, t.input_tokens, t.output_tokens));
    const auto [batch, tokens] =
        trtllm_bench_settings(requests, t.input_tokens, t.output_tokens, t.pipeline_parallel);
    if (t.batch) m_s.max_batch_size = batch;
    if (t.tokens) m_s.max_num_tokens = tokens;
  }

  TrtllmSettings m_s;
  int64_t m_budget = 0;
  bool m_paused = false;
};

int64_t round_up(double x, int64_t step) {
  return step * static_cast<int64_t>(std::ceil(x / static_cast<double>(step)));
}

}  // namespace

std::pair<int64_t, int64_t> trtllm_bench_settings(double kv_max_requests, double mean_input_tokens,
                                                  double mean_output_tokens,
                                                  int64_t pipeline_parallel) {
  // Caps that keep the decoder and activation buffers bounded, then rounding up to coarse steps.
  const double r = std::min(kv_max_requests, 4096.0) / static_cast<double>(pipeline_parallel);
  const double t = std::min(r * (1.0 + mean_input_tokens / mean_output_tokens), 32768.0);
  const int64_t batch = r < 256    ? std::max<int64_t>(64, round_up(r, 32))
                        : r < 1024 ? round_up(r, 128)
                                   : round_up(r, 256);
  const int64_t tokens = t < 4096   ? std::max<int64_t>(2048, round_up(t, 256))
                         : t < 8192 ? round_up(t, 512)
                                    : round_up(t, 1024);
  return {batch, tokens};
}

std::unique_ptr<Scheduler> make_trtllm(const Cfg& c) {
  TrtllmSettings s;
  if (const std::optional<Cfg> t = c.optional_child("trtllm_bench_tuning")) {
    TrtllmSettings::Tuning tuning;
    tuning.input_tokens = t->get_real("mean_input_tokens", {0.0, 1e9, true});
    tuning.output_tokens = t->get_real("mean_output_tokens", {0.0, 1e9, true});
    tuning.pipeline_parallel = t->get_int("pipeline_parallel", 1, {1, 1024});
    tuning.batch = !c.has("max_batch_size");
    tuning.tokens = !c.has("max_num_tokens");
    if (!tuning.batch && !tuning.tokens)
      t->fail("",
              "max_batch_size and max_num_tokens are both given: nothing is left to tune "
              "(trtllm-bench tunes only the limits not given)");
    s.tuning = tuning;
  }
  s.no_evict = c.get_choice("capacity_scheduler_policy", "GUARANTEED_NO_EVICT",
                            {"GUARANTEED_NO_EVICT", "MAX_UTILIZATION"}) == "GUARANTEED_NO_EVICT";
  s.max_batch_size = c.get_int("max_batch_size", s.max_batch_size, {1, 1 << 20});
  s.max_num_tokens = c.get_int("max_num_tokens", s.max_num_tokens, {1, int64_t{1} << 40});
  s.chunked = c.get_bool("enable_chunked_context", false);
  const std::string order =
      c.get_choice("priorities", "none", {"none", "highest_first", "lowest_first"});
  s.priority_sign = order == "none" ? 0 : order == "highest_first" ? -1 : 1;
  return std::make_unique<TrtllmScheduler>(s);
}

}  // namespace servesim
