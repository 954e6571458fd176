// vLLM's batch limits left out of a config are what the engine derives at start-up from its
// version, how it was started (scheduler.usage) and the replica's accelerator, which the sim
// layer passes down to the scheduler (schedulers/vllm_defaults.h, docs/schedulers.md#vllm).
#include <catch2/catch.hpp>
#include <string>

#include "core/errors.h"
#include "schedulers/scheduler.h"
#include "schedulers/vllm_defaults.h"
#include "sim/scenario.h"
#include "tests/support.h"

namespace t_sim_vllm_batch_defaults_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string scenario(const std::string& step_time, const std::string& scheduler,
                     const std::string& kv =
                         "{policy: paged, capacity_tokens: 100000, "
                         "block_size: 16}") {
  // Prefix caching off in both sections (the scenario checks they agree; V0's default is off).
  const std::string sched =
      scheduler.substr(0, scheduler.size() - 1) + ", enable_prefix_caching: false}";
  return "workload: {synthetic: {requests: 4, arrival: {kind: fixed, rate_per_s: 10},\n"
         "  prompt_tokens: {kind: fixed, value: 64}, output_tokens: {kind: fixed, value: 4}}}\n"
         "step_time: " +
         step_time + "\nscheduler: " + sched + "\nkv: " + kv + "\n";
}

int64_t seats(const std::string& yaml) {
  const Scenario s = build_scenario(doc_of(yaml));
  return s.components.replicas.front().scheduler->max_running();
}

}  // namespace

TEST_CASE("vllm defaults: by version, accelerator memory and usage", "[sim][vllm]") {
  const AcceleratorInfo h100{79.65, "h100-sxm"}, l40s{44.99, "l40s"}, a100{79.15, "a100-80gb"};
  const AcceleratorInfo unknown{};
  auto check = [](VllmBatchDefaults d, int64_t seqs, int64_t tokens) {
    CHECK(d.max_num_seqs == seqs);
    CHECK(d.max_num_batched_tokens == tokens);
  };
  check(vllm_batch_defaults(0, 19, h100, VllmUsage::ApiServer), 1024, 8192);
  check(vllm_batch_defaults(0, 19, h100, VllmUsage::LlmClass), 1024, 16384);
  check(vllm_batch_defaults(0, 19, l40s, VllmUsage::ApiServer), 256, 2048);
  check(vllm_batch_defaults(0, 19, l40s, VllmUsage::LlmClass), 256, 8192);
  check(vllm_batch_defaults(0, 19, unknown, VllmUsage::ApiServer), 256, 2048);
  // The A100 exception came with 0.9; 0.8 (as 0.8.5) gave an 80 GB A100 the large defaults.
  check(vllm_batch_defaults(0, 9, a100, VllmUsage::ApiServer), 256, 2048);
  check(vllm_batch_defaults(0, 8, a100, VllmUsage::ApiServer), 1024, 8192);
  // V0 keeps 256 and 2,048 whatever the accelerator.
  check(vllm_batch_defaults(0, 6, h100, VllmUsage::ApiServer), 256, 2048);
  // A 1.x line (none is known yet: scheduler.version refuses it) counts as V1 and past 0.9,
  // whatever its minor: the large defaults, the A100 excepted.
  check(vllm_batch_defaults(1, 0, h100, VllmUsage::ApiServer), 1024, 8192);
  check(vllm_batch_defaults(1, 0, a100, VllmUsage::ApiServer), 256, 2048);
}

TEST_CASE("vllm defaults: the scenario passes the replica's accelerator to the scheduler",
          "[sim][vllm]") {
  const std::string h100 = "{kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}";
  CHECK(seats(scenario(h100, "{kind: vllm}")) == 1024);
  CHECK(seats(scenario("{kind: roofline, model: llama-3.1-8b, hardware: l40s}", "{kind: vllm}")) ==
        256);
  CHECK(seats(scenario("{kind: roofline, model: llama-3.1-8b, hardware: a100-80gb}",
                       "{kind: vllm}")) == 256);
  // Explicit values are kept; V0 is unchanged.
  CHECK(seats(scenario(h100, "{kind: vllm, max_num_seqs: 64}")) == 64);
  CHECK(seats(scenario(h100, "{kind: vllm, version: \"0.6.6\"}")) == 256);
  // No hardware in the step model: kv.memory's, or its accelerator_gib; none at all: unknown.
  const std::string linear = "{kind: linear, base_ms: 10}";
  CHECK(seats(scenario(linear, "{kind: vllm}",
                       "{policy: paged, block_size: 16, memory: {model: llama-3.1-8b, "
                       "hardware: h200}}")) == 1024);
  CHECK(seats(scenario(linear, "{kind: vllm}",
                       "{policy: paged, block_size: 16, memory: {model: llama-3.1-8b, "
                       "accelerator_gib: 94}}")) == 1024);
  CHECK(seats(scenario(linear, "{kind: vllm}")) == 256);
  // A cluster's replicas and a pool's get the same.
  CHECK(build_scenario(doc_of(scenario(h100, "{kind: vllm}") +
                              "cluster: {replicas: 2, router: {kind: round_robin}}\n"))
            .components.replicas.back()
            .scheduler->max_running() == 1024);
}

TEST_CASE("vllm defaults: usage is checked", "[sim][vllm]") {
  const std::string h100 = "{kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}";
  CHECK(seats(scenario(h100, "{kind: vllm, usage: llm_class}")) == 1024);
  CHECK_THAT(input_error_of(scenario(h100, "{kind: vllm, usage: offline}")),
             Catch::Contains("scheduler.usage") && Catch::Contains("llm_class"));
  CHECK_THAT(input_error_of(scenario(h100, "{kind: vllm, version: \"0.6.6\", usage: llm_class}")),
             Catch::Contains("usage") && Catch::Contains("V1"));
}

}  // namespace t_sim_vllm_batch_defaults_test
