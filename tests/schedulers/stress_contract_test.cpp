// A stress contract over every scheduler and preemption mode: many small seeded workloads on a
// KV so small that preemptions, swaps and recomputes happen in the middle of chunked prefills and
// under token budgets, run in check mode (per-step invariants) and held to accounting identities
// that every run must keep, whatever the scheduler decides: the engine's totals are the sums of
// its steps, no step exceeds its seats, budget or KV, every request gets exactly its tokens, and
// where nothing is recomputed every prompt token is computed exactly once (a swapped request
// resumes where it stopped) and every output token but the first is one decode.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "schedulers/scheduler.h"
#include "sim/step_observer.h"
#include "tests/support.h"

namespace t_schedulers_stress_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Swap space of 10,000 KV tokens (1,000 bytes each): never full here, so every preemption of a
// request with context is a swap.
const std::string k_swap =
    ", preemption_mode: swap, swap_space_gb: 0.01, swap_bandwidth_gb_s: 25, "
    "kv_bytes_per_token: 1000";

struct Variant {
  std::string scheduler;
  int32_t seats = 4;
  int64_t budget = 0;  ///< tokens a step, 0: none
  bool swap = false;
  bool prefix = false;  ///< kv.prefix_caching
};

std::vector<Variant> variants() {
  std::vector<Variant> v = {
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 48}", 4, 48},
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 48" + k_swap + "}", 4, 48,
       true},
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 20, chunked_prefill: true}", 4,
       20},
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 20, chunked_prefill: true" +
           k_swap + "}",
       4, 20, true},
      {"{kind: continuous, max_num_seqs: 3, max_num_batched_tokens: 20, chunked_prefill: true" +
           k_swap + "}",
       3, 20, true, true},
      {"{kind: continuous, max_num_seqs: 4}", 4, 0},
      {"{kind: continuous, max_num_seqs: 4" + k_swap + "}", 4, 0, true},
      {"{kind: sarathi, max_batch_size: 4, token_budget: 16}", 4, 16},
      {"{kind: sarathi, max_batch_size: 4, token_budget: 16" + k_swap + "}", 4, 16, true},
      {"{kind: sarathi, max_batch_size: 4, token_budget: 16" + k_swap + "}", 4, 16, true, true},
      {"{kind: orca, max_batch_size: 4}", 4, 0},
      {"{kind: orca, max_batch_size: 4" + k_swap + "}", 4, 0, true},
      {"{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 20, enable_prefix_caching: false}", 4,
       20},
      {"{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 20}", 4, 20, false, true},
      {"{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 20, enable_prefix_caching: false, "
       "long_prefill_token_threshold: 8, scheduler_reserve_full_isl: false}",
       4, 20},
      {"{kind: vllm, version: \"0.6.6\", max_num_seqs: 4, max_num_batched_tokens: 48, "
       "enable_prefix_caching: false}",
       4, 48},
      {"{kind: vllm, version: \"0.6.6\", max_num_seqs: 4, max_num_batched_tokens: 20, "
       "enable_chunked_prefill: true, enable_prefix_caching: false}",
       4, 20},
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: 16, max_prefill_tokens: 24}",
       4, 0},
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: 16, enable_mixed_chunk: "
       "true, schedule_policy: lpm}",
       4, 0, false, true},
      {"{kind: trtllm, max_batch_size: 4, max_num_tokens: 48}", 4, 48},
      {"{kind: trtllm, max_batch_size: 4, max_num_tokens: 20, enable_chunked_context: true, "
       "capacity_scheduler_policy: MAX_UTILIZATION}",
       4, 20},
      {"{kind: trtllm, max_batch_size: 4, max_num_tokens: 20, enable_chunked_context: true, "
       "capacity_scheduler_policy: MAX_UTILIZATION}",
       4, 20, false, true},
      {"{kind: static, max_batch_size: 4}", 4, 0},
      {"{kind: dynamic, max_batch_size: 4, max_queue_delay_ms: 3}", 4, 0},
  };
  return v;
}

/// Ten requests in two bursts (0 to 2 ms apart, 30 ms between the bursts), prompts of 1 to 40
/// tokens, 1 to 24 output tokens; a small LCG keeps them the same on every platform.
std::string rows(uint32_t seed) {
  uint64_t x = seed * 2654435761u + 12345;
  auto next = [&x](int n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  std::string out;
  int at_ms = 0;
  for (int i = 0; i < 10; ++i) {
    at_ms += (i == 6 ? 30 : 0) + next(3);
    out += fmt::format("{},{},{}\n", at_ms * 0.001, 1 + next(40), 1 + next(24));
  }
  return out;
}

struct Steps final : StepObserver {
  Variant v;
  int64_t capacity = 0;
  int64_t steps = 0, seats = 0, prefill = 0, decode = 0, busy = 0, last_preemptions = 0;
  Time end;
  void on_step(const StepRecord& s) override {
    INFO("step " << steps);
    CHECK(s.sequences >= 1);
    CHECK(s.sequences <= v.seats);
    CHECK(s.prefill_sequences <= s.sequences);
    CHECK(s.prefill_tokens >= s.prefill_sequences);
    CHECK(s.decode_tokens + s.prefill_sequences <= s.sequences);
    // Over the budget only alone: vLLM V0 runs a recompute longer than its budget by itself.
    if (v.budget > 0 && s.prefill_tokens + s.decode_tokens > v.budget) {
      CHECK(s.sequences == 1);
      CHECK(s.prefill_sequences == 1);
      CHECK(s.preemptions > 0);
    }
    CHECK(s.kv_used_tokens <= s.kv_capacity_tokens);
    CHECK(s.kv_capacity_tokens == capacity);
    CHECK(s.duration.count_ns() > 0);
    CHECK(s.start >= end);  // one replica: steps never overlap
    CHECK(s.preemptions >= last_preemptions);
    end = s.start + s.duration;
    last_preemptions = s.preemptions;
    ++steps;
    seats += s.sequences;
    prefill += s.prefill_tokens;
    decode += s.decode_tokens;
    busy += s.duration.count_ns();
  }
};

}  // namespace

TEST_CASE("stress contract: every scheduler and preemption mode keeps the run's accounting exact",
          "[schedulers][contract]") {
  const std::string step = "{kind: linear, base_ms: 2, per_prefill_token_ms: 0.1, per_seq_ms: 0.3}";
  int64_t preempted_runs = 0, swapped_runs = 0, cached_runs = 0;
  for (const Variant& v : variants()) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      INFO(v.scheduler << " / prefix " << v.prefix << " / seed " << seed);
      const std::string kv = fmt::format("{{policy: paged, capacity_tokens: 96, block_size: 8{}}}",
                                         v.prefix ? ", prefix_caching: true" : "");
      const std::string trace = rows(seed);
      Scenario sc = build_scenario(doc_of(trace_scenario(trace, step, v.scheduler, kv)));
      Simulation sim(std::move(sc.components), /*check=*/true);
      CollectingRecorder rec;
      Steps obs;
      obs.v = v;
      obs.capacity = 96;
      sim.add_recorder(rec);
      sim.add_step_observer(obs);
      sim.run();
      const RunStats& st = sim.stats();
      // The engine's totals are the sums of its steps.
      CHECK(st.steps == obs.steps);
      CHECK(st.seat_steps == obs.seats);
      CHECK(st.prefill_tokens == obs.prefill);
      CHECK(st.busy_ns == obs.busy);
      CHECK(st.peak_kv_used_tokens <= 96);
      REQUIRE(rec.requests.size() == 10);
      int64_t prompts = 0, decodes = 0, cached = 0, preemptions = 0, swaps = 0;
      for (const Request& r : rec.by_id()) {
        INFO("request " << r.spec.id);
        REQUIRE(r.state == RequestState::Released);
        CHECK(r.generated_tokens == r.spec.output_tokens);
        CHECK(r.kv_held_tokens == 0);
        CHECK(r.swap_preemptions <= r.preemptions);
        if (!v.swap) CHECK(r.swap_preemptions == 0);
        CHECK(r.spec.arrival <= r.first_admitted);
        CHECK(r.first_admitted < r.first_token);
        CHECK(r.first_token <= r.last_token);
        CHECK(r.last_token == r.finish);
        CHECK(r.finish <= r.release);
        CHECK(r.first_token - r.spec.arrival <= r.finish - r.spec.arrival);  // TTFT <= E2E
        if (r.spec.output_tokens == 1) CHECK(r.first_token == r.finish);
        if (!v.prefix) CHECK(r.cached_prompt_tokens == 0);
        CHECK(r.cached_prompt_tokens >= 0);
        prompts += r.spec.prompt_tokens;
        decodes += r.spec.output_tokens - 1;
        cached += r.cached_prompt_tokens;
        preemptions += r.preemptions;
        swaps += r.swap_preemptions;
      }
      CHECK(obs.last_preemptions == preemptions);
      // Nothing recomputed (no preemption, or only swaps, which keep the context; a request
      // preempted before computing anything loses nothing): each prompt token not found in the
      // prefix cache is computed once, each output token after the first is one decode.
      if (v.swap || preemptions == 0) {
        CHECK(obs.prefill == prompts - cached);
        CHECK(obs.decode == decodes);
      } else {
        // A recompute computes the lost tokens again, and its prefill produces a token that
        // would otherwise have been a decode.
        CHECK(obs.prefill >= prompts - cached);
        CHECK(obs.decode <= decodes);
        CHECK(obs.decode >= decodes - preemptions);
      }
      preempted_runs += preemptions > 0;
      swapped_runs += swaps > 0;
      cached_runs += cached > 0;
    }
  }
  // The workloads do reach the rare paths the contract is for.
  CHECK(preempted_runs >= 40);
  CHECK(swapped_runs >= 15);
  CHECK(cached_runs >= 10);
}

}  // namespace t_schedulers_stress_contract_test
