// Every cross-key refusal of the engine's and the schedulers' readers (sim/, schedulers/) walked
// at its edge: the last accepted value runs, and one step past it is refused with the message
// that names the key and what is allowed. A check's relational operator moved by one (`<` for
// `<=`, `>` for `>=`) or its bound moved by one changes exactly one of the two answers.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace t_sim_refusal_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_linear = "{kind: linear, base_ms: 10}";
const std::string k_kv = "{policy: paged, capacity_tokens: 4000, block_size: 16}";
const std::string k_rows = "0,8,4\n0.01,8,4\n";

std::string scenario(const std::string& scheduler, const std::string& extra = "",
                     const std::string& kv = k_kv) {
  return trace_scenario(k_rows, k_linear, scheduler, kv) + extra;
}

/// `accepted` runs; `refused` is refused with every one of `words` in its message.
void edge(const std::string& accepted, const std::string& refused,
          const std::vector<std::string>& words) {
  CHECK(input_error_of(accepted) == "(no error)");
  const std::string e = input_error_of(refused);
  INFO(e);
  CHECK(e != "(no error)");
  for (const std::string& w : words) CHECK_THAT(e, Catch::Contains(w));
}

const std::string k_cont = "{kind: continuous, max_num_seqs: 4}";

std::string autoscaled(int replicas, int min, int max) {
  return scenario(k_cont,
                  fmt::format("cluster: {{replicas: {}, router: {{kind: least_outstanding}}, "
                              "autoscale: {{signal: queue, target: 1, min: {}, max: {}}}}}\n",
                              replicas, min, max));
}

}  // namespace

TEST_CASE("refusal edges: autoscale.max equal to min runs, one below is refused", "[sim][edges]") {
  edge(autoscaled(2, 2, 2), autoscaled(2, 2, 1), {"max", "= 1 is below min = 2"});
}

TEST_CASE("refusal edges: an autoscaled cluster starts with min to max replicas, both ends",
          "[sim][edges]") {
  edge(autoscaled(2, 2, 3), autoscaled(1, 2, 3),
       {"replicas", "= 1 are live", "from autoscale.min (2) to autoscale.max (3)"});
  edge(autoscaled(3, 2, 3), autoscaled(4, 2, 3), {"replicas", "= 4 are live"});
}

TEST_CASE("refusal edges: a scripted outage names replicas 0 to replicas - 1", "[sim][edges]") {
  const auto yaml = [](int replica) {
    return scenario(k_cont, fmt::format("cluster: {{replicas: 2, router: {{kind: round_robin}}, "
                                        "failures: {{script: [{{replica: {}, at_s: 0.005, "
                                        "down_s: 0.01}}]}}}}\n",
                                        replica));
  };
  CHECK(input_error_of(yaml(0)) == "(no error)");
  edge(yaml(1), yaml(2), {"replica", "names no replica: the cluster has 2 (0 to 1)"});
}

TEST_CASE("refusal edges: a cluster holds 4,096 replicas over its pools, not one more",
          "[sim][edges]") {
  // The second pool is checked before it is built: at 4,096 in all the reader goes on to its
  // step_time (refused here, so that no 4,096 replicas are built), at 4,097 it stops.
  const auto yaml = [](int second) {
    return scenario(k_cont, fmt::format("cluster:\n  router: {{kind: round_robin}}\n  pools:\n"
                                        "    - {{name: a, replicas: 6}}\n"
                                        "    - {{name: b, replicas: {}, step_time: {{kind: "
                                        "no_such_model}}}}\n",
                                        second));
  };
  const std::string at = input_error_of(yaml(4090));
  CHECK_THAT(at, Catch::Contains("no_such_model"));
  CHECK_THAT(at, !Catch::Contains("4,096"));
  CHECK_THAT(input_error_of(yaml(4091)),
             Catch::Contains("replicas") && Catch::Contains("at most 4,096 replicas in all"));
}

TEST_CASE("refusal edges: max_cpu_loras is 0 or at least max_loras", "[sim][edges][lora]") {
  const auto yaml = [](int cpu) {
    return scenario("{kind: vllm, enable_prefix_caching: false}",
                    fmt::format("lora: {{adapters: 4, max_loras: 2, max_cpu_loras: {}, "
                                "adapter_bytes: 1.0e9, host_to_gpu_gbps: 10, disk_gbps: 4, "
                                "peak_tflops: 1.0e5, peak_memory_gbps: 1.0e5}}\n",
                                cpu));
  };
  CHECK(input_error_of(yaml(0)) == "(no error)");
  edge(yaml(2), yaml(1), {"max_cpu_loras", "at least max_loras = 2"});
}

TEST_CASE("refusal edges: a trace's adapter ids run to lora.adapters", "[sim][edges][lora]") {
  const auto yaml = [](int adapter) {
    const std::string path =
        write_temp("edge_lora.csv", fmt::format("arrival_s,prompt_tokens,output_tokens,adapter\n"
                                                "0,8,4,0\n0.01,8,4,{}\n",
                                                adapter));
    return "workload: {trace: {path: " + path + "}}\nstep_time: " + k_linear +
           "\nscheduler: {kind: vllm, enable_prefix_caching: false}\nkv: " + k_kv +
           "\nlora: {adapters: 3, max_loras: 1, adapter_bytes: 1.0e9, host_to_gpu_gbps: 10, "
           "peak_tflops: 1.0e5, peak_memory_gbps: 1.0e5}\n";
  };
  edge(yaml(3), yaml(4), {"request 1", "adapter 4 is above lora.adapters = 3"});
}

TEST_CASE("refusal edges: vLLM V0's multi-step scheduling, from 0.6.0 and not with chunking",
          "[schedulers][edges][vllm]") {
  const auto yaml = [](const std::string& version, int steps, bool chunked) {
    return scenario(
        fmt::format("{{kind: vllm, version: \"{}\", num_scheduler_steps: {}, "
                    "enable_chunked_prefill: {}, enable_prefix_caching: false}}",
                    version, steps, chunked));
  };
  edge(yaml("0.6.0", 1, false), yaml("0.5.5", 1, false),
       {"num_scheduler_steps", "no multi-step scheduling", "came with vLLM 0.6.0"});
  edge(yaml("0.6.0", 1, true), yaml("0.6.0", 2, true),
       {"num_scheduler_steps", "with enable_chunked_prefill is not modelled"});
  CHECK(input_error_of(yaml("0.7.3", 2, false)) == "(no error)");
  // 0.8 is V1: multi-step is refused by name.
  CHECK_THAT(input_error_of(yaml("0.8.0", 1, true)), Catch::Contains("(V1) has no multi-step"));
}

TEST_CASE("refusal edges: vLLM's token budget is at least its sequences, V0 and V1",
          "[schedulers][edges][vllm]") {
  for (const std::string version : {"0.7.3", "0.8.0"}) {
    INFO(version);
    const auto yaml = [&](int budget) {
      return scenario(
          fmt::format("{{kind: vllm, version: \"{}\", max_num_seqs: 16, "
                      "max_num_batched_tokens: {}, enable_prefix_caching: false}}",
                      version, budget));
    };
    edge(yaml(16), yaml(15), {"max_num_batched_tokens", "at least max_num_seqs (16)"});
  }
}

TEST_CASE("refusal edges: SGLang's chunk size is -1 or at least 1", "[schedulers][edges]") {
  const auto yaml = [](int chunk, bool mixed) {
    return scenario(fmt::format(
        "{{kind: sglang, chunked_prefill_size: {}, enable_mixed_chunk: {}}}", chunk, mixed));
  };
  CHECK(input_error_of(yaml(-1, false)) == "(no error)");
  edge(yaml(1, false), yaml(0, false), {"chunked_prefill_size", "-1 (no chunking) or at least 1"});
  edge(yaml(1, true), yaml(-1, true), {"enable_mixed_chunk", "needs chunked prefill"});
}

TEST_CASE("refusal edges: trtllm-bench tuning needs a pool of at least one mean request",
          "[schedulers][edges]") {
  const auto yaml = [](int output) {
    return scenario(
        fmt::format("{{kind: trtllm, trtllm_bench_tuning: {{mean_input_tokens: 2000, "
                    "mean_output_tokens: {}}}}}",
                    output));
  };
  edge(yaml(2000), yaml(2001), {"pool of 4000 tokens holds no request", "2000 + 2001 tokens"});
}

TEST_CASE("refusal edges: fair order needs one weight above 0", "[schedulers][edges]") {
  const auto yaml = [](int prompt, int output) {
    return scenario(
        fmt::format("{{kind: continuous, max_num_seqs: 4, policy: fair, fair: "
                    "{{prompt_weight: {}, output_weight: {}}}}}",
                    prompt, output));
  };
  CHECK(input_error_of(yaml(1, 0)) == "(no error)");
  edge(yaml(0, 1), yaml(0, 0), {"output_weight", "both 0"});
}

TEST_CASE("refusal edges: a uniform cancel delay needs max_s above min_s", "[sim][edges]") {
  const auto yaml = [](const std::string& max) {
    return scenario(k_cont,
                    "abandonment: {cancel: {fraction: 1, after_s: {kind: uniform, min_s: "
                    "0.02, max_s: " +
                        max + "}}}\n");
  };
  edge(yaml("0.0201"), yaml("0.02"), {"max_s", "must exceed min_s = 0.02"});
}

TEST_CASE("refusal edges: speculative acceptance lists hold k or k + 1 numbers from 0 to 1",
          "[sim][edges][speculative]") {
  const auto yaml = [](const std::string& acceptance) {
    return scenario("{kind: vllm, enable_prefix_caching: false}",
                    "speculative: {method: ngram, k: 2, acceptance: " + acceptance + "}\n");
  };
  edge(yaml("{per_position: [1, 0]}"), yaml("{per_position: [1, 0, 0.5]}"),
       {"per_position", "list of 2 numbers from 0 to 1"});
  edge(yaml("{per_position: [1, 0]}"), yaml("{per_position: [1.001, 0]}"), {"item 1 is \"1.001\""});
  edge(yaml("{per_position: [0, 1]}"), yaml("{per_position: [0, -0.001]}"),
       {"item 2 is \"-0.001\""});
  edge(yaml("{distribution: [0.25, 0.25, 0.5]}"), yaml("{distribution: [0.25, 0.5]}"),
       {"distribution", "list of 3 numbers"});
  edge(yaml("{distribution: [0.25, 0.25, 0.5000005]}"), yaml("{distribution: [0.25, 0.25, 0.502]}"),
       {"distribution", "must sum to 1 (it sums to 1.002)"});
}

}  // namespace t_sim_refusal_edges_test
