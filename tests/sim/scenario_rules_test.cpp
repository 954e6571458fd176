// Rules between sections, checked when the scenario is built (sim/scenario_rules.cpp), and the
// scheduler's limited view of a batch (core/batch_state.h).
#include <catch2/catch.hpp>

#include "core/batch_state.h"
#include "core/errors.h"
#include "sim/scenario.h"
#include "tests/support.h"

namespace t_sim_scenario_rules_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// A scheduler is handed a SchedulerView: the engine's operations are not there.
template <typename T>
concept EngineSide = requires(T& s, const RequestSpec& spec) {
  s.add_request(spec);
  s.recycle(0u);
  s.set_now(Time::ns(0));
  s.take_wake();
};
static_assert(EngineSide<BatchState>);
static_assert(!EngineSide<SchedulerView>);

const std::string k_workload =
    "workload: {synthetic: {requests: 2, arrival: {kind: fixed, rate_per_s: 10},\n"
    "  prompt_tokens: {kind: fixed, value: 8}, output_tokens: {kind: fixed, value: 2}}}\n"
    "step_time: {kind: linear, base_ms: 1}\n";

// The same with a paged kv section that gives capacity_tokens, not memory.
const std::string k_paged_workload = k_workload + "kv: {policy: paged, capacity_tokens: 4096}\n";

std::string build_error(const std::string& yaml) {
  try {
    (void)build_scenario(doc_of(yaml));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("scenario_rules: a prefill or decode pool needs an iteration-level scheduler",
          "[sim][rules]") {
  const std::string yaml = k_workload +
                           "scheduler: {kind: static, max_batch_size: 4}\n"
                           "kv: {policy: paged, capacity_tokens: 4096}\n"
                           "cluster:\n  router: {kind: round_robin}\n"
                           "  decode_router: {kind: round_robin}\n"
                           "  pools:\n    - {name: p, role: prefill, replicas: 1}\n"
                           "    - {name: d, role: decode, replicas: 1}\n"
                           "  kv_transfer: {bandwidth_gb_s: 1, kv_bytes_per_token: 1000}\n";
  CHECK_THAT(build_error(yaml),
             Catch::Contains("pool \"p\" (prefill) needs an iteration-level scheduler "
                             "(continuous, orca, sarathi, vllm), not static"));
}

TEST_CASE("scenario_rules: vllm is checked against its own pool's kv section", "[sim][rules]") {
  // The top-level kv is paged with prefix caching, as vllm wants; pool b's own kv is reserve.
  const std::string yaml = k_workload +
                           "scheduler: {kind: vllm, max_num_seqs: 4}\n"
                           "kv: {policy: paged, capacity_tokens: 4096, prefix_caching: true}\n"
                           "cluster:\n  router: {kind: round_robin}\n"
                           "  pools:\n    - {name: a, replicas: 1}\n"
                           "    - {name: b, replicas: 1, kv: {policy: reserve, "
                           "capacity_tokens: 4096}}\n";
  CHECK_THAT(
      build_error(yaml),
      Catch::Contains("vllm needs kv.policy: paged (vLLM's KV cache is paged), not reserve"));
}

TEST_CASE("scenario_rules: swap preemption's KV bytes come from the replica's own kv section",
          "[sim][rules]") {
  // The top-level kv gives capacity_tokens (no bytes per token); pool q's own kv gives memory.
  // The rule reads each pool's kv: q needs no kv_bytes_per_token, and giving one is refused;
  // pool p, on the top-level kv, needs it.
  const std::string swap =
      "{kind: continuous, max_num_seqs: 4, preemption_mode: swap, swap_bandwidth_gb_s: 25";
  const std::string memory_kv =
      "{policy: paged, block_size: 16, memory: {accelerator_gib: 80, parameters: 8.0e9, layers: "
      "32, kv_heads: 8, head_dim: 128}}";
  const auto yaml = [&](const std::string& q_extra, const std::string& top_scheduler) {
    return k_workload + "scheduler: " + top_scheduler +
           "\n"
           "kv: {policy: paged, capacity_tokens: 4096}\n"
           "cluster:\n  router: {kind: round_robin}\n"
           "  pools:\n    - {name: p, replicas: 1}\n    - {name: q, replicas: 1, scheduler: " +
           swap + q_extra + "}, kv: " + memory_kv + "}\n";
  };
  const std::string plain = "{kind: continuous, max_num_seqs: 4}";
  CHECK(build_error(yaml("", plain)) == "no error");
  CHECK_THAT(
      build_error(yaml(", kv_bytes_per_token: 1000", plain)),
      Catch::Contains("kv_bytes_per_token") && Catch::Contains("must not be given with kv.memory"));
  // Pool p swaps too, on the top-level kv, which has no memory section.
  CHECK_THAT(build_error(yaml("", swap + "}")),
             Catch::Contains("swap needs the KV bytes of one token to time the transfers"));
}

TEST_CASE("scenario_rules: trtllm's chunk unit is the block size of the replica's own kv",
          "[sim][rules]") {
  // Pool q's own kv has blocks of 64 tokens; the top-level kv (pool p's) blocks of 16. With
  // chunked context, max_num_tokens 32 is a whole block of p's but less than one of q's.
  const auto yaml = [&](const std::string& q_block) {
    return k_workload +
           "scheduler: {kind: trtllm, enable_chunked_context: true, max_num_tokens: 32}\n"
           "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n"
           "cluster:\n  router: {kind: round_robin}\n"
           "  pools:\n    - {name: p, replicas: 2}\n    - {name: q, replicas: 1, kv: {policy: "
           "paged, block_size: " +
           q_block + ", capacity_tokens: 4096}}\n";
  };
  CHECK(build_error(yaml("32")) == "no error");
  CHECK_THAT(
      build_error(yaml("64")),
      Catch::Contains("max_num_tokens") &&
          Catch::Contains("must be at least kv.block_size (64) with enable_chunked_context"));
}

// The swap rule applies to swap preemption only: a scheduler that recomputes, by default or by
// name, needs no KV bytes per token.
TEST_CASE("preemption_mode rules: recompute needs no KV bytes per token, swap does",
          "[sim][rules]") {
  // The kv section gives capacity_tokens, not memory: no bytes per token anywhere.
  const std::string scheduler = "scheduler: {kind: continuous, max_num_seqs: 4";
  const std::string swap = ", preemption_mode: swap, swap_bandwidth_gb_s: 25";
  CHECK(build_error(k_paged_workload + scheduler + "}\n") == "no error");
  CHECK(build_error(k_paged_workload + scheduler + ", preemption_mode: recompute}\n") ==
        "no error");
  CHECK_THAT(build_error(k_paged_workload + scheduler + swap + "}\n"),
             Catch::Contains("swap needs the KV bytes of one token to time the transfers"));
  CHECK(build_error(k_paged_workload + scheduler + swap + ", kv_bytes_per_token: 1000}\n") ==
        "no error");
}

}  // namespace t_sim_scenario_rules_test
