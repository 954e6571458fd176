// The parallel engine's refusals (sim/parallel_engine.h: parallel_unsupported), one a feature: a
// run it can split gets no notice; each feature it cannot split yet (one replica, live loads,
// prefill/decode pools, speculative decoding, multi-LoRA, KV offload tiers, admission and
// abandonment, autoscaling, failures, a closed-loop workload, a bounded run) gets its own line,
// checked on the scenario as built, without running it.
#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel_engine.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "tests/support.h"

namespace t_sim_parallel_fallback_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_rows = "0,8,4\n0.01,8,4\n";
const std::string k_engine =
    "step_time: {kind: linear, base_ms: 10}\n"
    "scheduler: {kind: vllm, enable_prefix_caching: false}\n";
const std::string k_kv = "kv: {policy: paged, capacity_tokens: 4000, block_size: 16}\n";
const std::string k_two =
    "cluster: {replicas: 2, router: {kind: round_robin, load_refresh_ms: 10}}\n";

std::string trace_yaml(const std::string& rows = k_rows) {
  return "workload: {trace: {path: " +
         write_temp("fallback.csv", "arrival_s,prompt_tokens,output_tokens\n" + rows) + "}}\n";
}

std::string why(const std::string& yaml, const RunLimits& limits = {}) {
  const Scenario sc = build_scenario(doc_of(yaml));
  return parallel_unsupported(sc.components, limits);
}

}  // namespace

TEST_CASE("parallel fallback: two replicas with refreshed loads run in parallel",
          "[sim][parallel]") {
  CHECK(why(trace_yaml() + k_engine + k_kv + k_two) == "");
  RunLimits unbounded;
  unbounded.max_queued = 10;  // a bound on memory, not on the run's end: still parallel
  CHECK(why(trace_yaml() + k_engine + k_kv + k_two, unbounded) == "");
}

TEST_CASE("parallel fallback: each feature it cannot split is named", "[sim][parallel]") {
  const std::string base = trace_yaml() + k_engine + k_kv;
  CHECK_THAT(why(base), Catch::Contains("a single replica"));
  CHECK_THAT(why(base + "cluster: {replicas: 2, router: {kind: round_robin}}\n"),
             Catch::Contains("load_refresh_ms: 0"));
  CHECK_THAT(why(base + "cluster:\n  router: {kind: round_robin, load_refresh_ms: 10}\n"
                        "  decode_router: {kind: round_robin}\n"
                        "  pools:\n    - {name: p, role: prefill, replicas: 1}\n"
                        "    - {name: d, role: decode, replicas: 1}\n"
                        "  kv_transfer: {kv_bytes_per_token: 1000, bandwidth_gb_s: 1}\n"),
             Catch::Contains("prefill/decode pools"));
  CHECK_THAT(why(base + k_two + "speculative: {method: ngram, k: 2, acceptance: {rate: 0.5}}\n"),
             Catch::Contains("speculative decoding"));
  CHECK_THAT(why(base + k_two +
                 "lora: {adapters: 2, adapter_bytes: 1.0e9, peak_tflops: 1.0e5, "
                 "peak_memory_gbps: 1.0e5}\n"),
             Catch::Contains("multi-LoRA"));
  CHECK_THAT(why(trace_yaml() + "step_time: {kind: linear, base_ms: 10}\n" +
                 "scheduler: {kind: continuous, max_num_seqs: 4}\n" + k_two +
                 "kv: {policy: paged, block_size: 16, prefix_caching: true, capacity_tokens: "
                 "4000, offload: {kv_bytes_per_token: 1e6, tiers: [{name: host, capacity_gib: 1, "
                 "bandwidth_gb_s: 1, latency_us: 100}]}}\n"),
             Catch::Contains("kv.offload"));
  CHECK_THAT(why(base + k_two + "admission: {queue_cap: 4}\n"),
             Catch::Contains("admission and abandonment"));
  CHECK_THAT(why(base + k_two + "abandonment: {timeout_s: 1}\n"),
             Catch::Contains("admission and abandonment"));
  CHECK_THAT(why(base + "cluster: {replicas: 2, router: {kind: round_robin, load_refresh_ms: 10}, "
                        "autoscale: {signal: queue, target: 1, min: 1, max: 2}}\n"),
             Catch::Contains("cluster.autoscale"));
  CHECK_THAT(why(base + "cluster: {replicas: 2, router: {kind: round_robin, load_refresh_ms: 10}, "
                        "failures: {script: [{replica: 1, at_s: 1, down_s: 1}]}}\n"),
             Catch::Contains("replica failures"));
  CHECK_THAT(why("workload: {closed_loop: {users: 2, requests: 4, think_s: 1, prompt_tokens: "
                 "{kind: fixed, value: 4}, output_tokens: {kind: fixed, value: 2}}}\n" +
                 k_engine + k_kv + k_two),
             Catch::Contains("closed-loop workload"));
}

TEST_CASE("parallel fallback: a bound on simulated or wall time keeps the run sequential",
          "[sim][parallel]") {
  const std::string yaml = trace_yaml() + k_engine + k_kv + k_two;
  RunLimits sim_time;
  sim_time.max_sim_time = Time::from_seconds(100);
  CHECK_THAT(why(yaml, sim_time), Catch::Contains("a bounded run"));
  RunLimits wall;
  wall.max_wall_s = 1e-3;
  CHECK_THAT(why(yaml, wall), Catch::Contains("a bounded run"));
}

}  // namespace t_sim_parallel_fallback_test
