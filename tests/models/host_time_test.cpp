// The engine's host time and CUDA graphs around a step model (models/host_time.h): the wrapper's
// arithmetic on a stub model, then whole scenarios under kind vllm, sglang and trtllm with every
// time worked out by hand in the comments.
#include "models/host_time.h"

#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/models/operator_stubs.h"
#include "tests/support.h"

namespace t_models_host_time_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 1 + 0.1 x sequences + 0.01 x prefill tokens
class Stub final : public StepTimeModel {
 public:
  double step_ms(const StepShape& s) const override {
    return 1.0 + 0.1 * s.sequences + 0.01 * static_cast<double>(s.prefill_tokens);
  }
};

StepShape decode(int32_t n) {
  StepShape s;
  s.sequences = n;
  s.decode_sequences = n;
  return s;
}

StepShape prefill(int64_t tokens) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = tokens;
  return s;
}

CudaGraphs graphs(bool pad, bool mixed) {
  CudaGraphs g;
  g.enabled = true;
  g.capture_sizes = {1, 2, 4, 8};
  g.pad = pad;
  g.graph_mixed_steps = mixed;
  g.eager_launch_ms = 5.0;
  return g;
}

}  // namespace

TEST_CASE("host_time: exposed host time adds to the step, hidden host time overlaps it",
          "[models][host_time]") {
  const auto serial =
      with_host_time(std::make_unique<Stub>(), two_part_host(false), CudaGraphs{}, false);
  // gpu 1 + 0.4 = 1.4; host 0.5 + 0.4 + 0.2 = 1.1, all exposed: 2.5
  CHECK(serial->step_ms(decode(4)) == Approx(2.5));
  const auto overlapped =
      with_host_time(std::make_unique<Stub>(), two_part_host(true), CudaGraphs{}, false);
  // hidden 0.9 under gpu 1.4, exposed 0.2: 1.6
  CHECK(overlapped->step_ms(decode(4)) == Approx(1.6));
  // 40 seats: gpu 5, hidden 0.5 + 4 = 4.5 < 5: 5.2
  CHECK(overlapped->step_ms(decode(40)) == Approx(5.2));
  HostTime heavy = two_part_host(true);
  heavy.parts[0].per_seq_ms = 0.3;
  const auto cpu_bound = with_host_time(std::make_unique<Stub>(), heavy, CudaGraphs{}, false);
  // 10 seats: gpu 2, hidden 0.5 + 3 = 3.5 > 2 (the CPU sets the pace): 3.5 + 0.2 = 3.7
  CHECK(cpu_bound->step_ms(decode(10)) == Approx(3.7));
  // Sampling run by another process: off the path even without overlap: max(1.4, 0.2) + 0.9.
  HostTime side = two_part_host(false);
  side.off_path[static_cast<size_t>(HostPart::Sample)] = true;
  const auto off_path = with_host_time(std::make_unique<Stub>(), side, CudaGraphs{}, false);
  CHECK(off_path->step_ms(decode(4)) == Approx(2.3));
}

TEST_CASE("host_time: CUDA graphs pad small decode steps, the rest run eager",
          "[models][host_time]") {
  const HostTime none;
  const auto padded = with_host_time(std::make_unique<Stub>(), none, graphs(true, false), true);
  CHECK(padded->step_ms(decode(3)) == Approx(1.4));   // replays the graph of 4 seats
  CHECK(padded->step_ms(decode(8)) == Approx(1.8));   // exactly captured
  CHECK(padded->step_ms(decode(9)) == Approx(5.0));   // eager: max(1.9, 5 launch)
  CHECK(padded->step_ms(decode(60)) == Approx(7.0));  // eager, kernels longer than launches
  CHECK(padded->step_ms(prefill(4)) == Approx(5.0));  // decode graphs only: eager
  const auto piecewise = with_host_time(std::make_unique<Stub>(), none, graphs(true, true), true);
  CHECK(piecewise->step_ms(prefill(4)) == Approx(1.14));   // 4 tokens <= 8: graphed, unpadded
  CHECK(piecewise->step_ms(prefill(100)) == Approx(5.0));  // 100 tokens > 8: eager
  const auto exact = with_host_time(std::make_unique<Stub>(), none, graphs(false, false), true);
  CHECK(exact->step_ms(decode(3)) == Approx(5.0));  // no graph of 3 and no padding: eager
  CHECK(exact->step_ms(decode(4)) == Approx(1.4));
  CudaGraphs off = graphs(true, false);
  off.enabled = false;
  const auto eager = with_host_time(std::make_unique<Stub>(), none, off, true);
  CHECK(eager->step_ms(decode(1)) == Approx(5.0));
}

TEST_CASE("host_time: data-parallel ranks each charge and graph their own seats",
          "[models][host_time]") {
  // Two ranks: a step of n seats is ceil(n / 2) on the busiest rank.
  const auto serial =
      with_host_time(std::make_unique<Stub>(), two_part_host(false), CudaGraphs{}, false, 2);
  // 4 seats, 2 a rank: gpu 1 + 0.4 = 1.4; host 0.5 + 0.1 x 2 + 0.2 = 0.9: 2.3 (2.5 on one rank)
  CHECK(serial->step_ms(decode(4)) == Approx(2.3));
  // 5 seats, 3 on the busiest: host 0.5 + 0.3 + 0.2 = 1.0; gpu 1.5: 2.5
  CHECK(serial->step_ms(decode(5)) == Approx(2.5));
  const HostTime none;
  const auto padded = with_host_time(std::make_unique<Stub>(), none, graphs(true, false), true, 2);
  // 6 seats: 3 a rank, each padded to the graph of 4: the shape of 8 seats, 1 + 0.8
  CHECK(padded->step_ms(decode(6)) == Approx(1.8));
  // 4 seats: 2 a rank, captured exactly: 1.4
  CHECK(padded->step_ms(decode(4)) == Approx(1.4));
  // 16 seats: 8 a rank, the largest graph (on one rank it would be eager: max(2.6, 5))
  CHECK(padded->step_ms(decode(16)) == Approx(2.6));
  CHECK(padded->step_ms(decode(17)) == Approx(5.0));  // 9 on the busiest: eager
  const auto piecewise =
      with_host_time(std::make_unique<Stub>(), none, graphs(true, true), true, 2);
  CHECK(piecewise->step_ms(prefill(16)) == Approx(1.26));  // 8 tokens a rank: graphed
  CHECK(piecewise->step_ms(prefill(17)) == Approx(5.0));   // 9 on the busiest: eager
}

namespace {

// step_ms = 2 + 1 x sequences + 0.5 x prefill tokens (cuda_graphs gives 10 layers).
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";
// Host time of 1 ms a step in scheduling alone (hidden under overlap), 0.5 ms sampling.
const std::string k_host =
    "host_time: {schedule: {per_step_ms: 1, per_seq_ms: 0}, prepare_inputs: {per_step_ms: 0, "
    "per_seq_ms: 0}, sample: {per_step_ms: 0.5, per_seq_ms: 0}, process_outputs: {per_step_ms: "
    "0, per_seq_ms: 0}}";

}  // namespace

TEST_CASE("host_time: a vllm run with host time and CUDA graphs, timed by hand",
          "[models][host_time]") {
  // One request: prompt 4, 3 tokens, at 0. Graphs of 2 seats; eager launch 10 layers x 100 us
  // = 1 ms. vLLM V1: a mixed step of <= 2 tokens is graphed, else eager.
  // Synchronous (no overlap): exposed host 1 + 0.5 = 1.5 ms a step.
  // t=0    prefill 4: gpu 2 + 1 + 2 = 5 (eager, 4 tokens > 2; launches 1 < 5) + 1.5 -> 6.5
  // t=6.5  decode 1 seat, padded to 2: gpu 2 + 2 = 4, + 1.5                       -> 12
  // t=12   decode: 4 + 1.5                                                       -> 17.5
  const std::string trace = "0,4,3\n";
  const std::string graphs =
      ", cuda_graphs: {capture_sizes: [2], layers: 10, eager_launch_us_per_layer: 100}";
  const std::string sched = "{kind: vllm, enable_prefix_caching: false, " + k_host + graphs;
  auto sync = run_requests(trace_scenario(trace, k_linear, sched + "}", k_kv));
  CHECK(sync[0].first_token.count_ns() == ms(6.5));
  CHECK(sync[0].finish.count_ns() == ms(17.5));
  // async_scheduling: scheduling (1 ms) hides under the GPU, sampling (0.5) does not:
  // 5.5, then 4.5, 4.5 -> 5.5, 10, 14.5
  auto async =
      run_requests(trace_scenario(trace, k_linear, sched + ", async_scheduling: true}", k_kv));
  CHECK(async[0].first_token.count_ns() == ms(5.5));
  CHECK(async[0].finish.count_ns() == ms(14.5));
}

TEST_CASE("host_time: vLLM's default capture sizes pad 3 seats to 4 and 5 to 8",
          "[models][host_time]") {
  // n requests of prompt 4 and 2 tokens at 0 under vLLM 0.19's default graphs ([1, 2, 4] and
  // multiples of 8): the prefill step, then one decode step of n seats, graphed at the smallest
  // captured size >= n. Its time: gpu 2 + 1 x padded seats, plus 1.5 ms exposed host time.
  const std::string sched = "{kind: vllm, enable_prefix_caching: false, " + k_host +
                            ", cuda_graphs: {layers: 10, eager_launch_us_per_layer: 100}}";
  const auto decode_ms = [&](int n) {
    std::string trace;
    for (int i = 0; i < n; ++i) trace += "0,4,2\n";
    const auto r = run_requests(trace_scenario(trace, k_linear, sched, k_kv));
    REQUIRE(r.size() == static_cast<size_t>(n));
    return static_cast<double>((r[0].finish - r[0].first_token).count_ns()) / 1e6;
  };
  CHECK(decode_ms(1) == Approx(2 + 1 + 1.5));
  CHECK(decode_ms(2) == Approx(2 + 2 + 1.5));
  CHECK(decode_ms(3) == Approx(2 + 4 + 1.5));
  CHECK(decode_ms(4) == Approx(2 + 4 + 1.5));
  CHECK(decode_ms(5) == Approx(2 + 8 + 1.5));
  CHECK(decode_ms(9) == Approx(2 + 16 + 1.5));
}

TEST_CASE("host_time: vLLM 0.11 and later capture up to twice max_num_seqs tokens",
          "[models][host_time]") {
  // max_num_seqs 8: graphs of 1, 2, 4, 8 and 16 tokens (min(2 x 8, 512) = 16). One request,
  // prompt p, 1 token, so one prefill step of p tokens on 1 sequence: gpu 2 + 1 + 0.5 p, the
  // launches of 10 layers x 2 ms = 20 ms when eager (the step is max(gpu, 20)), plus 1.5 ms of
  // host time. p = 16 is captured: 11 + 1.5 = 12.5 ms. p = 17 is above the largest graph:
  // eager, max(11.5, 20) + 1.5 = 21.5 ms. (Graphs up to 3 x 8 = 24 would pad 17 to 24.)
  const std::string sched = "{kind: vllm, enable_prefix_caching: false, max_num_seqs: 8, " +
                            k_host +
                            ", cuda_graphs: {layers: 10, eager_launch_us_per_layer: 2000}}";
  const auto first_token_ms = [&](int prompt) {
    const auto r =
        run_requests(trace_scenario("0," + std::to_string(prompt) + ",1\n", k_linear, sched, k_kv));
    REQUIRE(r.size() == 1);
    return static_cast<double>(r[0].first_token.count_ns()) / 1e6;
  };
  CHECK(first_token_ms(16) == Approx(12.5));
  CHECK(first_token_ms(17) == Approx(21.5));
}

TEST_CASE("host_time: sglang's overlap scheduler and trtllm's exact-size graphs, timed by hand",
          "[models][host_time]") {
  const std::string trace = "0,4,2\n";
  // sglang, overlap on (its default): prefill 4: eager max(5, 1) + 0.5 = 5.5; decode 1 seat,
  // graph of 1: 3 + 0.5 = 3.5 -> 5.5, 9.
  const std::string sg =
      "{kind: sglang, " + k_host +
      ", cuda_graphs: {capture_sizes: [1, 2], layers: 10, eager_launch_us_per_layer: 100}";
  auto on = run_requests(trace_scenario(trace, k_linear, sg + "}", k_kv));
  CHECK(on[0].first_token.count_ns() == ms(5.5));
  CHECK(on[0].finish.count_ns() == ms(9));
  // enable_overlap_schedule: false: + 1 ms a step -> 6.5, 11
  auto off =
      run_requests(trace_scenario(trace, k_linear, sg + ", enable_overlap_schedule: false}", k_kv));
  CHECK(off[0].first_token.count_ns() == ms(6.5));
  CHECK(off[0].finish.count_ns() == ms(11));
  // trtllm: no padding, the graph of 2 does not serve 1 seat: the decode runs eager,
  // max(3, 1 launch) = 3, + 0.5 -> 5.5, 9. With a launch cost of 10 ms a step (1 ms a layer):
  // prefill max(5, 10) + 0.5 = 10.5, decode max(3, 10) + 0.5 = 10.5 -> 10.5, 21.
  const std::string trt =
      "{kind: trtllm, " + k_host + ", cuda_graphs: {capture_sizes: [2], layers: 10, ";
  auto trt_small =
      run_requests(trace_scenario(trace, k_linear, trt + "eager_launch_us_per_layer: 100}}", k_kv));
  CHECK(trt_small[0].finish.count_ns() == ms(9));
  auto trt_big = run_requests(
      trace_scenario(trace, k_linear, trt + "eager_launch_us_per_layer: 1000}}", k_kv));
  CHECK(trt_big[0].first_token.count_ns() == ms(10.5));
  CHECK(trt_big[0].finish.count_ns() == ms(21));
}

TEST_CASE("host_time: off unless asked, and bad settings are refused with the key",
          "[models][host_time]") {
  const std::string trace = "0,4,2\n";
  // Off (no host_time, no cuda_graphs): the linear model alone: 5 + 3 = 8.
  auto plain = run_requests(
      trace_scenario(trace, k_linear, "{kind: vllm, enable_prefix_caching: false}", k_kv));
  CHECK(plain[0].finish.count_ns() == ms(8));
  CHECK_THAT(input_error_of(trace_scenario(
                 trace, k_linear,
                 "{kind: vllm, enable_prefix_caching: false, cuda_graphs: {capture_sizes: [4, 2]}}",
                 k_kv)),
             Catch::Contains("capture_sizes") && Catch::Contains("ascending"));
  // A size with text after its digits is no integer.
  CHECK_THAT(
      input_error_of(trace_scenario(
          trace, k_linear,
          "{kind: vllm, enable_prefix_caching: false, cuda_graphs: {capture_sizes: [2, 4x]}}",
          k_kv)),
      Catch::Contains("capture_sizes") && Catch::Contains("ascending"));
  CHECK_THAT(input_error_of(
                 trace_scenario(trace, k_linear,
                                "{kind: vllm, enable_prefix_caching: false, version: \"0.6.3\", "
                                "async_scheduling: true, host_time: true}",
                                k_kv)),
             Catch::Contains("async_scheduling") && Catch::Contains("V0"));
  CHECK_THAT(
      input_error_of(trace_scenario(
          trace, k_linear,
          "{kind: vllm, enable_prefix_caching: false, version: six, host_time: true}", k_kv)),
      Catch::Contains("version") && Catch::Contains("MAJOR.MINOR"));
  // A model without a layer count cannot price eager launches.
  CHECK_THAT(input_error_of(trace_scenario(
                 trace, "{kind: linear, base_ms: 2}",
                 "{kind: vllm, enable_prefix_caching: false, host_time: true}", k_kv)),
             Catch::Contains("cuda_graphs") && Catch::Contains("layers"));
  // Not an engine preset: the keys are unknown.
  CHECK_THAT(input_error_of(trace_scenario(
                 trace, k_linear, "{kind: continuous, max_num_seqs: 4, host_time: true}", k_kv)),
             Catch::Contains("host_time"));
}

}  // namespace t_models_host_time_test
