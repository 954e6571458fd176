// The swap rule of sim/scenario_rules.cpp (check_scheduler_and_kv) applies to swap preemption
// only: a scheduler that recomputes, by default or by name, needs no KV bytes per token.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "sim/scenario.h"
#include "tests/support.h"

namespace t_sim_preemption_mode_rules_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_workload =
    "workload: {synthetic: {requests: 2, arrival: {kind: fixed, rate_per_s: 10},\n"
    "  prompt_tokens: {kind: fixed, value: 8}, output_tokens: {kind: fixed, value: 2}}}\n"
    "step_time: {kind: linear, base_ms: 1}\n"
    "kv: {policy: paged, capacity_tokens: 4096}\n";

std::string build_error(const std::string& yaml) {
  try {
    (void)build_scenario(doc_of(yaml));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("preemption_mode rules: recompute needs no KV bytes per token, swap does",
          "[sim][rules]") {
  // The kv section gives capacity_tokens, not memory: no bytes per token anywhere.
  const std::string scheduler = "scheduler: {kind: continuous, max_num_seqs: 4";
  const std::string swap = ", preemption_mode: swap, swap_bandwidth_gb_s: 25";
  CHECK(build_error(k_workload + scheduler + "}\n") == "no error");
  CHECK(build_error(k_workload + scheduler + ", preemption_mode: recompute}\n") == "no error");
  CHECK_THAT(build_error(k_workload + scheduler + swap + "}\n"),
             Catch::Contains("swap needs the KV bytes of one token to time the transfers"));
  CHECK(build_error(k_workload + scheduler + swap + ", kv_bytes_per_token: 1000}\n") == "no error");
}

}  // namespace t_sim_preemption_mode_rules_test
