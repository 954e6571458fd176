// Contracts every registered scheduler must keep, under both KV policies, on random workloads:
// no request lost, KV never above capacity, lifecycle times in order, identical output twice.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "core/kv/kv_manager.h"
#include "schedulers/scheduler.h"
#include "tests/support.h"

namespace t_schedulers_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// The scheduler sections the contract runs for `kind`, each with what it adds to the kv
/// section (vllm must agree with kv.prefix_caching).
struct Variant {
  std::string scheduler, kv_extra;
};
std::vector<Variant> variants(const std::string& kind) {
  if (kind == "continuous")
    return {{"{kind: continuous, max_num_seqs: 6, max_num_batched_tokens: 512}", ""},
            {"{kind: continuous, max_num_seqs: 6, max_num_batched_tokens: 96, "
             "chunked_prefill: true}",
             ""},
            {"{kind: continuous, max_num_seqs: 6, max_num_batched_tokens: 96, chunked_prefill: "
             "true, preemption_mode: swap, swap_space_gb: 0.0003, swap_bandwidth_gb_s: 25, "
             "kv_bytes_per_token: 1000}",
             ""}};
  if (kind == "sglang")
    return {{"{kind: sglang, max_running_requests: 6, chunked_prefill_size: 64, "
             "max_prefill_tokens: 96}",
             ""},
            {"{kind: sglang, max_running_requests: 6, chunked_prefill_size: 64, "
             "enable_mixed_chunk: true, schedule_policy: lpm, new_token_ratio_decay_steps: 20}",
             ", prefix_caching: true"}};
  if (kind == "trtllm")
    return {{"{kind: trtllm, max_batch_size: 6, max_num_tokens: 96}", ""},
            {"{kind: trtllm, max_batch_size: 6, max_num_tokens: 96, enable_chunked_context: true, "
             "capacity_scheduler_policy: MAX_UTILIZATION}",
             ", prefix_caching: true"}};
  if (kind == "vllm")
    return {{"{kind: vllm, max_num_seqs: 6, max_num_batched_tokens: 96, "
             "enable_prefix_caching: false}",
             ""},
            {"{kind: vllm, max_num_seqs: 6, max_num_batched_tokens: 96}", ", prefix_caching: true"},
            {"{kind: vllm, max_num_seqs: 6, max_num_batched_tokens: 96, enable_prefix_caching: "
             "false, long_prefill_token_threshold: 40, scheduling_policy: priority, "
             "scheduler_reserve_full_isl: false}",
             ""}};
  if (kind == "orca") return {{"{kind: orca, max_batch_size: 6}", ""}};
  if (kind == "sarathi")
    return {{"{kind: sarathi, max_batch_size: 6, token_budget: 96}", ""},
            {"{kind: sarathi, max_batch_size: 6, token_budget: 96, preemption_mode: swap, "
             "swap_space_gb: 0.0003, swap_bandwidth_gb_s: 25, kv_bytes_per_token: 1000}",
             ", prefix_caching: true"}};
  if (kind == "dynamic")
    return {{"{kind: dynamic, max_batch_size: 6, max_queue_delay_ms: 20}", ""}};
  return {{"{kind: " + kind + ", max_batch_size: 6}", ""}};
}

std::string scenario(const Variant& v, const std::string& policy, int seed) {
  // A small KV (1,200 tokens) under heavy load forces queueing and, with paged KV, preemption.
  return fmt::format(
      "workload: {{synthetic: {{requests: 150, arrival: {{kind: poisson, rate_per_s: 40}},\n"
      "  prompt_tokens: {{kind: lognormal, median: 60, sigma: 0.8, max: 400}},\n"
      "  output_tokens: {{kind: uniform, min: 1, max: 200}}}}}}\n"
      "step_time: {{kind: linear, base_ms: 5, per_seq_ms: 0.2, per_context_token_ms: 0.001, "
      "per_prefill_token_ms: 0.02}}\n"
      "scheduler: {}\n"
      "kv: {{policy: {}, capacity_tokens: 1200, block_size: 16{}}}\n"
      "seed: {}\n",
      v.scheduler, policy, v.kv_extra, seed);
}

}  // namespace

TEST_CASE("contract: every scheduler serves every request within KV capacity, deterministically",
          "[schedulers][contract]") {
  for (const std::string& kind : scheduler_names()) {
    for (const std::string& policy : kv_policy_names()) {
      if (kind == "vllm" && policy != "paged") continue;  // vLLM's KV is paged (it says so)
      for (const Variant& v : variants(kind)) {
        if (policy != "paged" && !v.kv_extra.empty()) continue;  // a prefix cache is paged
        for (int seed : {1, 2, 3}) {
          INFO(v.scheduler << " / " << policy << v.kv_extra << " / seed " << seed);
          const std::string yaml = scenario(v, policy, seed);
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
            if (policy == "reserve" || kind == "static" || kind == "dynamic")
              CHECK(r.preemptions == 0);
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
  const RunOutput out = run_scenario(doc_of(scenario(variants("continuous")[0], "paged", 1)), true);
  CHECK(out.summary.preemptions > 0);
  CHECK(out.summary.finished + out.summary.rejected == 150);
}

}  // namespace t_schedulers_contract_test
