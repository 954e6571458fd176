// orca and sarathi are named settings of the continuous policy: each must schedule exactly as
// continuous with the settings docs/schedulers.md says it stands for.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_schedulers_aliases_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string requests_csv(const std::string& scheduler, const std::string& kv) {
  const std::string yaml =
      "workload: {synthetic: {requests: 120, arrival: {kind: poisson, rate_per_s: 50},\n"
      "  prompt_tokens: {kind: lognormal, median: 80, sigma: 0.8, max: 400},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 120}}}\n"
      "step_time: {kind: linear, base_ms: 2, per_seq_ms: 0.2, per_prefill_token_ms: 0.02}\n"
      "scheduler: " +
      scheduler + "\nkv: " + kv + "\n";
  return run_scenario(doc_of(yaml), true).requests_csv;
}

const std::string k_paged = "{policy: paged, capacity_tokens: 1600, block_size: 16}";
const std::string k_reserve = "{policy: reserve, capacity_tokens: 4000, block_size: 16}";

}  // namespace

TEST_CASE("orca: continuous batching of whole prompts, no token budget", "[schedulers][aliases]") {
  for (const std::string& kv : {k_paged, k_reserve}) {
    INFO(kv);
    CHECK(requests_csv("{kind: orca, max_batch_size: 8}", kv) ==
          requests_csv("{kind: continuous, max_num_seqs: 8}", kv));
  }
}

TEST_CASE("aliases: a batch of no seats or a budget of no tokens is refused with the range",
          "[schedulers][aliases]") {
  for (const char* sched :
       {"{kind: sarathi, max_batch_size: 0, token_budget: 64}", "{kind: orca, max_batch_size: 0}"})
    CHECK_THAT(
        input_error_of(trace_scenario("0,4,2\n", "{kind: linear, base_ms: 1}", sched, k_paged)),
        Catch::Contains("max_batch_size = \"0\"") &&
            Catch::Contains("must be an integer from 1 to 1048576"));
  CHECK_THAT(
      input_error_of(trace_scenario("0,4,2\n", "{kind: linear, base_ms: 1}",
                                    "{kind: sarathi, max_batch_size: 8, token_budget: 0}",
                                    k_paged)),
      Catch::Contains("token_budget = \"0\"") && Catch::Contains("must be an integer from 1"));
}

TEST_CASE("sarathi: chunked prefill under a token budget, decodes first", "[schedulers][aliases]") {
  for (const std::string& kv : {k_paged, k_reserve}) {
    INFO(kv);
    CHECK(requests_csv("{kind: sarathi, max_batch_size: 8, token_budget: 64}", kv) ==
          requests_csv("{kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 64, "
                       "chunked_prefill: true}",
                       kv));
  }
}

}  // namespace t_schedulers_aliases_test
