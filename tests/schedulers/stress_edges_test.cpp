// The stress contract (stress_contract_test.cpp) at the budgets' edges and under the keyed
// queue orders: SGLang with a chunk size the running decodes use up exactly (mixed chunk) or an
// input budget of one token, continuous and vLLM with a token budget equal to their seats, TRT-LLM
// with max_num_tokens at its seats, and continuous, vLLM and SGLang under priority, sjf and fair
// orders, where preemption victims may already be planned. Every step's prefill entries compute
// at least one token each, no step goes over its seats or budget, the engine's totals are the
// sums of its steps, and every request gets exactly its tokens in time order.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "schedulers/scheduler.h"
#include "sim/step_observer.h"
#include "tests/support.h"

namespace t_schedulers_stress_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

struct Variant {
  std::string scheduler;
  int32_t seats = 4;
  int64_t budget = 0;  ///< tokens a step (prefill + decode), 0: none
};

std::vector<Variant> variants() {
  return {
      // The running decodes (up to 3) take a chunk size of 3 whole: no prefill chunk is left.
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: 3, max_prefill_tokens: 64, "
       "enable_mixed_chunk: true}",
       4},
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: 64, max_prefill_tokens: 3, "
       "enable_mixed_chunk: true}",
       4},
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: 4, max_prefill_tokens: 1}",
       4},
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: 5, schedule_policy: lof}", 4},
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 4, chunked_prefill: true}", 4,
       4},
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 12, chunked_prefill: true, "
       "policy: priority}",
       4, 12},
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 12, chunked_prefill: true, "
       "policy: sjf}",
       4, 12},
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 12, chunked_prefill: true, "
       "policy: fair}",
       4, 12},
      // No token budget: a keyed order's victim (the least urgent running request) may be the
      // request asking for KV while others still wait behind it in the pass.
      {"{kind: continuous, max_num_seqs: 4, policy: sjf, sjf: {predictor: lognormal, sigma: 1}}",
       4},
      {"{kind: continuous, max_num_seqs: 4, policy: sjf, sjf: {predictor: oracle}}", 4},
      {"{kind: continuous, max_num_seqs: 4, policy: priority}", 4},
      {"{kind: continuous, max_num_seqs: 4, policy: edf}", 4},
      {"{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 64, enable_prefix_caching: false, "
       "scheduling_policy: priority}",
       4, 64},
      {"{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 4, enable_prefix_caching: false}", 4,
       4},
      {"{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 12, enable_prefix_caching: false, "
       "scheduling_policy: priority}",
       4, 12},
      {"{kind: trtllm, max_batch_size: 4, max_num_tokens: 4, enable_chunked_context: true, "
       "capacity_scheduler_policy: MAX_UTILIZATION}",
       4, 4},
  };
}

/// Ten requests in two bursts, prompts of 1 to 30 tokens, 1 to 16 output tokens, priorities -1
/// to 1 and two tenants; a small LCG keeps them the same on every platform.
std::string rows(uint32_t seed) {
  uint64_t x = seed * 2246822519u + 99;
  auto next = [&x](int n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  std::string out;
  int at_ms = 0;
  for (int i = 0; i < 10; ++i) {
    at_ms += (i == 5 ? 25 : 0) + next(3);
    out += fmt::format("{},{},{},{},{}\n", at_ms * 0.001, 1 + next(30), 1 + next(16), next(3) - 1,
                       next(2) == 0 ? "a" : "b");
  }
  return out;
}

struct Steps final : StepObserver {
  Variant v;
  int64_t steps = 0, seats = 0, prefill = 0, busy = 0;
  Time end;
  void on_step(const StepRecord& s) override {
    INFO("step " << steps);
    CHECK(s.sequences >= 1);
    CHECK(s.sequences <= v.seats);
    CHECK(s.prefill_sequences <= s.sequences);
    CHECK(s.prefill_tokens >= s.prefill_sequences);  // no prefill entry of 0 tokens
    CHECK(s.decode_tokens + s.prefill_sequences <= s.sequences);
    if (v.budget > 0) CHECK(s.prefill_tokens + s.decode_tokens <= v.budget);
    CHECK(s.kv_used_tokens <= s.kv_capacity_tokens);
    CHECK(s.start >= end);
    end = s.start + s.duration;
    ++steps;
    seats += s.sequences;
    prefill += s.prefill_tokens;
    busy += s.duration.count_ns();
    records.push_back(s);
  }
  std::vector<StepRecord> records;
};

/// One run of `yaml` under --check: its requests by id and its steps.
struct Observed {
  std::vector<Request> requests;
  Steps steps;
};
Observed run_observed(const std::string& yaml, const Variant& v) {
  Scenario sc = build_scenario(doc_of(yaml));
  Simulation sim(std::move(sc.components), /*check=*/true);
  CollectingRecorder rec;
  Observed out;
  out.steps.v = v;
  sim.add_recorder(rec);
  sim.add_step_observer(out.steps);
  sim.run();
  out.requests = rec.by_id();
  return out;
}

}  // namespace

TEST_CASE("stress edges: every scheduler at its budgets' edges and under keyed orders",
          "[schedulers][contract]") {
  const std::string step = "{kind: linear, base_ms: 2, per_prefill_token_ms: 0.1, per_seq_ms: 0.3}";
  int64_t preempted_runs = 0;
  for (const Variant& v : variants()) {
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      INFO(v.scheduler << " / seed " << seed);
      const std::string path = write_temp(
          "trace.csv", "arrival_s,prompt_tokens,output_tokens,priority,tenant\n" + rows(seed));
      const std::string yaml = "workload: {trace: {path: " + path + "}}\nstep_time: " + step +
                               "\nscheduler: " + v.scheduler +
                               "\nkv: {policy: paged, capacity_tokens: 64, block_size: 4}\n";
      Scenario sc = build_scenario(doc_of(yaml));
      Simulation sim(std::move(sc.components), /*check=*/true);
      CollectingRecorder rec;
      Steps obs;
      obs.v = v;
      sim.add_recorder(rec);
      sim.add_step_observer(obs);
      sim.run();
      const RunStats& st = sim.stats();
      CHECK(st.steps == obs.steps);
      CHECK(st.seat_steps == obs.seats);
      CHECK(st.prefill_tokens == obs.prefill);
      CHECK(st.busy_ns == obs.busy);
      REQUIRE(rec.requests.size() == 10);
      int64_t preemptions = 0, prompts = 0;
      for (const Request& r : rec.by_id()) {
        INFO("request " << r.spec.id);
        REQUIRE(r.state == RequestState::Released);
        CHECK(r.generated_tokens == r.spec.output_tokens);
        CHECK(r.kv_held_tokens == 0);
        CHECK(r.spec.arrival <= r.first_admitted);
        CHECK(r.first_admitted < r.first_token);
        CHECK(r.first_token <= r.finish);
        preemptions += r.preemptions;
        prompts += r.spec.prompt_tokens;
      }
      if (preemptions == 0) CHECK(obs.prefill == prompts);
      CHECK(obs.prefill >= prompts);
      preempted_runs += preemptions > 0;
    }
  }
  CHECK(preempted_runs >= 10);
}

TEST_CASE(
    "stress edges: a pass whose asker is its own victim plans nothing, and the engine "
    "plans again at once",
    "[schedulers][contract]") {
  // The trace (rows(1) of the case above) under sjf with the true output lengths on a 64-token
  // KV of 4-token blocks. At 52.7 ms r4 (14 output tokens, the least urgent running), r8 (4) and
  // r9 (4) hold 24 + 16 + 24 = 64 tokens; r4 and r8 each need a new block to decode. The pass
  // asks for r4's block first, and r4 is its own victim: the pass stops there with nothing
  // planned (as vLLM V1's does), though r8 and r9 still run. The engine plans again at once,
  // and r8 gets r4's freed block. Before this was fixed the replica idled forever with 40
  // tokens held: "the scheduler stopped planning steps".
  const std::string yaml = trace_scenario(
      "0.0,17,1\n0.0,6,7\n0.001,20,6\n0.001,22,16\n0.001,14,14\n0.027,27,8\n0.027,24,6\n"
      "0.029,17,10\n0.03,14,4\n0.031,23,4\n",
      "{kind: linear, base_ms: 2, per_prefill_token_ms: 0.1, per_seq_ms: 0.3}",
      "{kind: continuous, max_num_seqs: 4, policy: sjf, sjf: {predictor: oracle}}",
      "{policy: paged, capacity_tokens: 64, block_size: 4}");
  const Observed run = run_observed(yaml, {"continuous sjf", 4, 0});
  const std::vector<Request>& r = run.requests;
  const std::vector<StepRecord>& steps = run.steps.records;
  REQUIRE(r.size() == 10);
  for (const Request& q : r) {
    INFO("request " << q.spec.id);
    CHECK(q.state == RequestState::Released);
    CHECK(q.generated_tokens == q.spec.output_tokens);
  }
  CHECK(r[3].preemptions == 1);  // r3 (16 output tokens) gave way first, with a step planned
  CHECK(r[4].preemptions == 1);  // then r4, its own victim
  // The step after r4's preemption (the first with two preemptions counted) follows the one
  // before it without a gap: r8 and r9 decode in it.
  size_t k = 0;
  while (k < steps.size() && steps[k].preemptions < 2) ++k;
  REQUIRE(k > 0);
  REQUIRE(k < steps.size());
  CHECK(steps[k].start == steps[k - 1].start + steps[k - 1].duration);
  CHECK(steps[k].sequences == 2);
  CHECK(steps[k].decode_tokens == 2);
}

TEST_CASE("stress edges: SGLang admits nothing while the running decodes use up the chunk size",
          "[schedulers][contract]") {
  // Mixed chunk, chunk size 2, 10 ms steps. r0 and r1 (1 prompt token, 3 output tokens) prefill
  // together 0-10 ms; r2 (1 token) arrives at 1 ms. From 10 ms the two decodes take the whole
  // chunk size, so r2 waits (no prefill entry of 0 tokens for it) until both end at 30 ms; it is
  // admitted then and prefills 30-40 ms.
  const std::string yaml = trace_scenario(
      "0,1,3\n0,1,3\n0.001,1,2\n", "{kind: linear, base_ms: 10}",
      "{kind: sglang, max_running_requests: 4, chunked_prefill_size: 2, enable_mixed_chunk: true}",
      "{policy: paged, capacity_tokens: 10000, block_size: 1}");
  const Observed run = run_observed(yaml, {"sglang", 4, 0});
  const std::vector<Request>& r = run.requests;
  REQUIRE(r.size() == 3);
  CHECK(r[0].finish.count_ns() == ms(30));
  CHECK(r[2].first_admitted.count_ns() == ms(30));
  CHECK(r[2].first_token.count_ns() == ms(40));
  CHECK(run.steps.steps == 5);
}

}  // namespace t_schedulers_stress_edges_test
