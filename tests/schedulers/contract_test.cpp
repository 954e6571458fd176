// Contracts every registered scheduler must keep, under both KV policies, on random workloads:
// no request lost, KV never above capacity, lifecycle times in order, identical output twice.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "schedulers/scheduler.h"
#include "sim/kv_manager.h"
#include "tests/support.h"

using namespace servesim;
using namespace servesim::test;

namespace {

std::string scheduler_section(const std::string& kind, bool chunked) {
  if (kind == "continuous")
    return chunked ? "{kind: continuous, max_num_seqs: 6, max_num_batched_tokens: 96, "
                     "chunked_prefill: true}"
                   : "{kind: continuous, max_num_seqs: 6, max_num_batched_tokens: 512}";
  if (kind == "dynamic") return "{kind: dynamic, max_batch_size: 6, max_queue_delay_ms: 20}";
  return "{kind: " + kind + ", max_batch_size: 6}";
}

std::string scenario(const std::string& kind, const std::string& policy, bool chunked, int seed) {
  // A small KV (1,200 tokens) under heavy load forces queueing and, with paged KV, preemption.
  return fmt::format(
      "workload: {{synthetic: {{requests: 150, arrival: {{kind: poisson, rate_per_s: 40}},\n"
      "  prompt_tokens: {{kind: lognormal, median: 60, sigma: 0.8, max: 400}},\n"
      "  output_tokens: {{kind: uniform, min: 1, max: 200}}}}}}\n"
      "step_time: {{kind: linear, base_ms: 5, per_seq_ms: 0.2, per_context_token_ms: 0.001, "
      "per_prefill_token_ms: 0.02}}\n"
      "scheduler: {}\n"
      "kv: {{policy: {}, capacity_tokens: 1200, block_size: 16}}\n"
      "seed: {}\n",
      scheduler_section(kind, chunked), policy, seed);
}

}  // namespace

TEST_CASE("contract: every scheduler serves every request within KV capacity, deterministically",
          "[schedulers][contract]") {
  for (const std::string& kind : scheduler_names()) {
    for (const std::string& policy : kv_policy_names()) {
      for (bool chunked : {false, true}) {
        if (chunked && kind != "continuous") continue;
        for (int seed : {1, 2, 3}) {
          INFO(kind << " / " << policy << (chunked ? " / chunked" : "") << " / seed " << seed);
          const std::string yaml = scenario(kind, policy, chunked, seed);
          Scenario sc = build_scenario(doc_of(yaml));
          Simulation sim(std::move(sc.components), /*check=*/true);
          CollectingRecorder rec;
          sim.add_recorder(rec);
          sim.run();
          const RunStats& st = sim.stats();
          CHECK(st.peak_kv_used_tokens <= st.kv_capacity_tokens);
          CHECK(rec.requests.size() == 150);
          for (const Request& r : rec.requests) {
            if (r.state == RequestState::Rejected) {
              CHECK_FALSE(r.reject_reason.empty());
              continue;
            }
            REQUIRE(r.state == RequestState::Released);
            CHECK(r.generated_tokens == r.spec.output_tokens);
            CHECK(r.kv_held_tokens == 0);
            CHECK(r.spec.arrival <= r.first_admitted);
            CHECK(r.first_admitted < r.first_token);
            CHECK(r.first_token <= r.finish);
            CHECK(r.finish <= r.release);
            if (policy == "reserve" || kind != "continuous") CHECK(r.preemptions == 0);
          }
          // Byte-identical results on a second run of the same config and seed.
          const RunOutput a = run_scenario(doc_of(yaml), true);
          const RunOutput b = run_scenario(doc_of(yaml), true);
          CHECK(a.requests_csv == b.requests_csv);
          CHECK(a.summary_json == b.summary_json);
        }
      }
    }
  }
}

TEST_CASE("contract: paged KV under pressure does preempt, and still serves everyone",
          "[schedulers][contract]") {
  const RunOutput out = run_scenario(doc_of(scenario("continuous", "paged", false, 1)), true);
  CHECK(out.summary.preemptions > 0);
  CHECK(out.summary.finished + out.summary.rejected == 150);
}
