// Contracts every registered scheduler keeps, with exact times where they can be worked out by
// hand (docs/schedulers.md). Looped over scheduler_names(), so a new scheduler is held to them:
// a lone request's TTFT and E2E under a linear step model; no step over the seats or the token
// budget; first admissions in arrival order among equal requests.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "schedulers/scheduler.h"
#include "sim/step_observer.h"
#include "tests/support.h"

namespace t_schedulers_scheduler_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Each kind with 4 seats and, where it has one, a budget of `budget` tokens a step.
std::string section(const std::string& kind, int budget = 64) {
  if (kind == "continuous")
    return fmt::format("{{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: {}}}", budget);
  if (kind == "vllm")
    return fmt::format(
        "{{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: {}, enable_prefix_caching: "
        "false}}",
        budget);
  if (kind == "sglang")
    return fmt::format(
        "{{kind: sglang, max_running_requests: 4, chunked_prefill_size: {0}, "
        "max_prefill_tokens: {0}}}",
        budget);
  if (kind == "trtllm")
    return fmt::format("{{kind: trtllm, max_batch_size: 4, max_num_tokens: {}}}", budget);
  if (kind == "sarathi")
    return fmt::format("{{kind: sarathi, max_batch_size: 4, token_budget: {}}}", budget);
  if (kind == "dynamic") return "{kind: dynamic, max_batch_size: 4, max_queue_delay_ms: 0}";
  return "{kind: " + kind + ", max_batch_size: 4}";
}

bool has_budget(const std::string& kind) {
  return kind == "continuous" || kind == "vllm" || kind == "sglang" || kind == "trtllm" ||
         kind == "sarathi";
}

// A prefill costs 5 ms plus 1 ms a prompt token; a step of decodes alone 5 ms.
const std::string k_step = "{kind: linear, base_ms: 5, per_prefill_token_ms: 1}";
const std::string k_kv = "{policy: paged, capacity_tokens: 4096, block_size: 16}";

struct Limits final : StepObserver {
  int32_t most_sequences = 0;
  int64_t most_tokens = 0;
  int64_t most_kv = 0, capacity = 0;
  int64_t steps = 0;
  int64_t empty_entries = 0;  // steps with a prefill entry that computes nothing
  void on_step(const StepRecord& s) override {
    if (s.prefill_sequences > s.prefill_tokens) ++empty_entries;
    most_sequences = std::max(most_sequences, s.sequences);
    most_tokens = std::max(most_tokens, s.prefill_tokens + s.decode_tokens);
    most_kv = std::max(most_kv, s.kv_used_tokens);
    capacity = s.kv_capacity_tokens;
    ++steps;
  }
};

/// The requests of a checked run of `yaml` and what its steps held.
struct Observed {
  std::vector<Request> requests;
  Limits limits;
};

Observed observed_run(const std::string& yaml) {
  Scenario sc = build_scenario(doc_of(yaml));
  Simulation sim(std::move(sc.components), /*check=*/true);
  CollectingRecorder rec;
  Observed o;
  sim.add_recorder(rec);
  sim.add_step_observer(o.limits);
  sim.run();
  o.requests = std::move(rec.requests);
  for (const Request& r : o.requests) CHECK(r.state == RequestState::Released);
  return o;
}

/// Runs `yaml` (12 requests, a budget of 3 tokens a step, a KV of 96 tokens) and checks what
/// every step keeps under that pressure: within the budget (which chunked prompts fill), no
/// prefill entry that computes nothing, within the KV; and that it did preempt.
void tight_budget_run(const std::string& yaml) {
  const Observed o = observed_run(yaml);
  REQUIRE(o.requests.size() == 12);
  int64_t preempted = 0;
  for (const Request& r : o.requests) preempted += r.preemptions;
  CHECK(preempted > 0);
  CHECK(o.limits.most_tokens == 3);
  CHECK(o.limits.empty_entries == 0);
  CHECK(o.limits.most_kv <= 96);
}

}  // namespace

TEST_CASE("scheduler contract: a lone request's TTFT and E2E are the step model's sums",
          "[schedulers][contract]") {
  // Prompt 8, 4 tokens: a prefill of 5 + 8 ms gives the first token at 13 ms, then three
  // decode steps of 5 ms each: done at 28 ms. Arriving at 100 ms shifts everything by 100 ms.
  for (const std::string& kind : scheduler_names()) {
    INFO(kind);
    for (double at : {0.0, 0.1}) {
      const auto rs =
          run_requests(trace_scenario(fmt::format("{},8,4\n", at), k_step, section(kind), k_kv));
      REQUIRE(rs.size() == 1);
      const Request& r = rs[0];
      REQUIRE(r.state == RequestState::Released);
      const int64_t t0 = ms(at * 1e3);
      CHECK(r.first_admitted.count_ns() == t0);
      CHECK(r.first_token.count_ns() == t0 + ms(13));
      CHECK(r.finish.count_ns() == t0 + ms(28));
      CHECK(r.generated_tokens == 4);
      CHECK(r.preemptions == 0);
      CHECK(r.kv_held_tokens == 0);
    }
  }
}

TEST_CASE("scheduler contract: a one-token reply finishes with its prefill",
          "[schedulers][contract]") {
  for (const std::string& kind : scheduler_names()) {
    INFO(kind);
    const auto rs = run_requests(trace_scenario("0,20,1\n", k_step, section(kind), k_kv));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].first_token.count_ns() == ms(25));
    CHECK(rs[0].finish.count_ns() == ms(25));
  }
}

TEST_CASE("scheduler contract: no step holds more than the seats, the budget or the KV",
          "[schedulers][contract]") {
  // 40 requests at once, prompts of 10 to 60 tokens: the queue is full from the start.
  std::string rows;
  int64_t asked = 0;
  for (int i = 0; i < 40; ++i) {
    rows += fmt::format("0,{},{}\n", 10 + (i * 7) % 51, 1 + i % 9);
    asked += 1 + i % 9;
  }
  for (const std::string& kind : scheduler_names()) {
    INFO(kind);
    const Observed o = observed_run(trace_scenario(rows, k_step, section(kind), k_kv));
    const Limits& lim = o.limits;
    REQUIRE(o.requests.size() == 40);
    int64_t generated = 0;
    for (const Request& r : o.requests) generated += r.generated_tokens;
    CHECK(generated == asked);
    // The batch fills up to its seats exactly (many are waiting), and no further.
    CHECK(lim.most_sequences == 4);
    if (has_budget(kind)) CHECK(lim.most_tokens <= 64);
    // Chunked prefill (vLLM's default, Sarathi's design) fills a step's budget exactly.
    if (kind == "vllm" || kind == "sarathi") CHECK(lim.most_tokens == 64);
    CHECK(lim.most_kv <= lim.capacity);
    CHECK(lim.capacity == 4096);
  }
}

TEST_CASE(
    "scheduler contract: a budget of 3 tokens under KV pressure: no step over it, no empty "
    "entry",
    "[schedulers][contract]") {
  // 12 requests at once, prompts of 20 to 40 tokens and 30 to 52 out, 4 seats, a budget of 3
  // tokens a step (vLLM, which wants no fewer tokens than seats: 3 seats) and a KV of 6 blocks
  // of 16: prompts are chunked 3 tokens at a time, decodes take the budget first (3 decoding
  // leave nothing for a prefill in the batch), and growing decodes preempt. (TensorRT-LLM
  // chunks in whole blocks: no budget under a block.)
  std::string rows;
  for (int i = 0; i < 12; ++i) rows += fmt::format("0,{},{}\n", 20 + (i * 7) % 21, 30 + 2 * i);
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"continuous",
       "{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 3, chunked_prefill: true}"},
      {"vllm",
       "{kind: vllm, max_num_seqs: 3, max_num_batched_tokens: 3, "
       "enable_prefix_caching: false}"},
      {"sarathi", "{kind: sarathi, max_batch_size: 4, token_budget: 3}"},
      // Preempted by swapping: the victims come back through swap_in, under the same budget.
      {"continuous, swapping",
       "{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 3, chunked_prefill: true, "
       "preemption_mode: swap, swap_bandwidth_gb_s: 1, kv_bytes_per_token: 100000}"},
      {"sarathi, swapping",
       "{kind: sarathi, max_batch_size: 4, token_budget: 3, preemption_mode: swap, "
       "swap_bandwidth_gb_s: 1, kv_bytes_per_token: 100000}"}};
  for (const auto& [kind, sched] : kinds) {
    INFO(kind);
    tight_budget_run(trace_scenario(rows, k_step, sched,
                                    "{policy: paged, capacity_tokens: 96, block_size: 16}"));
  }
}

TEST_CASE(
    "continuous: with priorities a victim ahead of a prefilling request leaves the budget to "
    "the decodes after it",
    "[schedulers][contract]") {
  // policy: priority picks the victim by (priority, arrival, id), so a request that prefills,
  // the newest in the batch but the most urgent, stays while a decode ahead of it is
  // preempted; the decodes planned after that still count against the budget of 3 tokens.
  // Long low-priority requests at 0 fill the KV (6 blocks of 16); urgent ones with long
  // prompts arrive every 40 ms.
  std::string rows = "arrival_s,prompt_tokens,output_tokens,priority\n";
  for (int i = 0; i < 4; ++i) rows += fmt::format("0,{},{},5\n", 14 + i, 60 - 3 * i);
  for (int i = 0; i < 8; ++i) rows += fmt::format("{},{},4,0\n", 0.04 * (i + 1), 30 + i);
  tight_budget_run("workload: {trace: {path: " + write_temp("trace.csv", rows) +
                   "}}\nstep_time: " + k_step +
                   "\nscheduler: {kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 3, "
                   "chunked_prefill: true, policy: priority}\n"
                   "kv: {policy: paged, capacity_tokens: 96, block_size: 16}\n");
}

TEST_CASE("scheduler contract: equal requests are first admitted in arrival order",
          "[schedulers][contract]") {
  // 12 identical requests 1 ms apart, more than the seats: first come, first served.
  std::string rows;
  for (int i = 0; i < 12; ++i) rows += fmt::format("{},16,6\n", i * 0.001);
  for (const std::string& kind : scheduler_names()) {
    INFO(kind);
    const auto rs = run_requests(trace_scenario(rows, k_step, section(kind), k_kv));
    REQUIRE(rs.size() == 12);
    for (size_t i = 1; i < rs.size(); ++i) {
      INFO("request " << i);
      CHECK(rs[i - 1].first_admitted <= rs[i].first_admitted);
      CHECK(rs[i - 1].first_token <= rs[i].first_token);
    }
  }
}

TEST_CASE(
    "scheduler contract: without chunking a prompt of the whole budget runs, one more is "
    "refused",
    "[schedulers][contract]") {
  // The schedulers that refuse at arrival a prompt their token budget (64) cannot hold in one
  // step when chunking is off: a prompt of exactly 64 tokens prefills in one step (5 + 64 ms,
  // then 5 ms a decode), one of 65 is rejected with the budget in the reason.
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"continuous",
       "{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 64, "
       "chunked_prefill: false}"},
      {"vllm",
       "{kind: vllm, version: \"0.6.0\", max_num_seqs: 4, max_num_batched_tokens: 64, "
       "enable_chunked_prefill: false, enable_prefix_caching: false}"},
      {"trtllm",
       "{kind: trtllm, max_batch_size: 4, max_num_tokens: 64, "
       "enable_chunked_context: false}"}};
  for (const auto& [kind, sched] : kinds) {
    INFO(kind);
    const auto rs = run_requests(trace_scenario("0,64,2\n0.5,65,2\n", k_step, sched, k_kv));
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].state == RequestState::Released);
    CHECK(rs[0].first_token.count_ns() == ms(69));
    CHECK(rs[0].finish.count_ns() == ms(74));
    CHECK(rs[1].state == RequestState::Rejected);
    CHECK_THAT(rs[1].reject_reason, Catch::Contains("65") && Catch::Contains("64"));
  }
}

}  // namespace t_schedulers_scheduler_contract_test
