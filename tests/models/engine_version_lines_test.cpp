// The version lines inside the engines' host-time defaults (models/host_time.cpp), each timed by
// hand on both sides: vLLM's capture sizes before and from 0.11, SGLang's overlap scheduler off
// before 0.4 and on from it, TensorRT-LLM's C++ executor before 1.0.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_models_engine_version_lines_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 x sequences + 0.5 x prefill tokens; 10 layers for the eager launches.
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";
// 1 ms a step of scheduling (hidden under overlap), 0.5 ms of sampling.
const std::string k_host =
    "host_time: {schedule: {per_step_ms: 1, per_seq_ms: 0}, prepare_inputs: {per_step_ms: 0, "
    "per_seq_ms: 0}, sample: {per_step_ms: 0.5, per_seq_ms: 0}, process_outputs: {per_step_ms: "
    "0, per_seq_ms: 0}}";

double ms_of(Time t) { return static_cast<double>(t.count_ns()) / 1e6; }

}  // namespace

TEST_CASE(
    "engine version lines: vLLM 0.10 captures multiples of 8 to 512, 0.11 stops at twice "
    "max_num_seqs",
    "[models][host_time]") {
  // max_num_seqs 8, one request of prompt 17 and 1 token: one prefill step of 17 tokens, GPU
  // time 2 + 1 + 0.5 x 17 = 11.5 ms, plus 1.5 ms of host time. 0.11: graphs up to
  // min(2 x 8, 512) = 16 tokens, so the step runs eager: max(11.5, 10 layers x 2 ms) + 1.5 =
  // 21.5 ms. 0.10: graphs of 8, 16, 24, ... 512 tokens, so it runs as a graph (no launches):
  // 11.5 + 1.5 = 13 ms.
  const auto first_token_ms = [&](const std::string& version) {
    const std::string sched =
        "{kind: vllm, enable_prefix_caching: false, max_num_seqs: 8, version: \"" + version +
        "\", " + k_host + ", cuda_graphs: {layers: 10, eager_launch_us_per_layer: 2000}}";
    const auto r = run_requests(trace_scenario("0,17,1\n", k_linear, sched, k_kv));
    REQUIRE(r.size() == 1);
    return ms_of(r[0].first_token);
  };
  CHECK(first_token_ms("0.11") == Approx(21.5));
  CHECK(first_token_ms("0.10") == Approx(13.0));
}

TEST_CASE("engine version lines: SGLang overlaps its scheduler by default from 0.4, not in 0.3",
          "[models][host_time]") {
  // One request of prompt 4 and 2 tokens. Overlap on: prefill max(2 + 1 + 2, 1 ms of launches)
  // + 0.5 = 5.5, decode (graph of 1) 3 + 0.5 = 3.5: 5.5 and 9. Off: + 1 ms a step: 6.5, 11.
  const auto times = [&](const std::string& version) {
    const std::string sched =
        "{kind: sglang, version: \"" + version + "\", " + k_host +
        ", cuda_graphs: {capture_sizes: [1, 2], layers: 10, eager_launch_us_per_layer: 100}}";
    const auto r = run_requests(trace_scenario("0,4,2\n", k_linear, sched, k_kv));
    REQUIRE(r.size() == 1);
    return std::pair{ms_of(r[0].first_token), ms_of(r[0].finish)};
  };
  CHECK(times("0.4") == std::pair{5.5, 9.0});
  CHECK(times("0.3") == std::pair{6.5, 11.0});
}

TEST_CASE("engine version lines: TensorRT-LLM has profiled host time from 1.0",
          "[models][host_time]") {
  const auto with = [&](const std::string& version) {
    return input_error_of(trace_scenario(
        "0,4,2\n", k_linear,
        "{kind: trtllm, version: \"" + version + "\", host_time: true, cuda_graphs: {layers: 10}}",
        k_kv));
  };
  CHECK(with("1.0") == "(no error)");
  CHECK_THAT(with("0.21"), Catch::Contains("host_time") &&
                               Catch::Contains("TensorRT-LLM 0.21 runs the C++ executor"));
}

TEST_CASE("engine version lines: TensorRT-LLM's default graphs are 1, 2, 4, ..., 128, unpadded",
          "[models][host_time]") {
  // n requests of prompt 4 and 2 tokens, all prefilled in the first step; the second step
  // decodes n seats: 2 + n ms of GPU time. TensorRT-LLM captures 1, 2, 4, ..., 128 without
  // padding, so those batches run as a graph (2 + n ms) where any other (3, 5, 127) runs
  // eager, behind 10 layers x 20 ms = 200 ms of launches. No host time.
  const auto decode_ms = [&](int requests) {
    std::string trace;
    for (int i = 0; i < requests; ++i) trace += "0,4,2\n";
    const auto r = run_requests(trace_scenario(
        trace, k_linear,
        "{kind: trtllm, max_batch_size: 256, max_num_tokens: 8192, cuda_graphs: {layers: 10, "
        "eager_launch_us_per_layer: 20000}}",
        "{policy: paged, capacity_tokens: 8192, block_size: 16}"));
    REQUIRE(r.size() == static_cast<size_t>(requests));
    return ms_of(r[0].finish - r[0].first_token);
  };
  for (const int n : {1, 2, 4, 8, 16, 32, 64, 128}) {
    INFO(n << " seats");
    CHECK(decode_ms(n) == Approx(2.0 + n));
  }
  for (const int n : {3, 5, 127}) {
    INFO(n << " seats");
    CHECK(decode_ms(n) == Approx(200.0));
  }
}

}  // namespace t_models_engine_version_lines_test
