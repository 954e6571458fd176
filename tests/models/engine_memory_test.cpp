// Engine memory and admission rules (docs/schedulers.md#engine-memory-rules), each against the
// engine's own formula worked by hand:
//   vLLM / SGLang: KV = device x utilization - weights - reserve (gpu_memory_utilization,
//     mem_fraction_static);
//   TensorRT-LLM: KV = (device - weights - reserve) x free_gpu_memory_fraction;
//   GUARANTEED_NO_EVICT with paged KV reserves prompt + max_tokens (kv.max_output_tokens);
//   trtllm-bench's max_batch_size / max_num_tokens heuristic.
#include <catch2/catch.hpp>

#include "models/kv_memory.h"
#include "schedulers/trtllm.h"
#include "tests/support.h"

namespace t_models_engine_memory_test {

using namespace servesim;
using namespace test;
namespace {

// An 8e9-parameter fp16 model (16e9 bytes of weights), 32 layers, 8 KV heads of 128: one token's
// KV is 2 x 32 x 8 x 128 x 2 = 131,072 bytes. An 80 GiB device (85,899,345,920 bytes), 2 GiB
// reserved (2,147,483,648 bytes).
const std::string k_shape =
    "accelerator_gib: 80, parameters: 8.0e9, layers: 32, kv_heads: 8, head_dim: 128, "
    "reserved_gib: 2";

KvMemory memory_of(const std::string& flow) {
  const auto doc = doc_of("kv: {memory: {" + flow + "}}\n");
  const KvMemory m = read_kv_memory(Cfg::root(doc).child("kv").child("memory"));
  doc->check_all_read();
  return m;
}

const std::string k_linear = "{kind: linear, base_ms: 10}";

}  // namespace

TEST_CASE("engine memory: utilization is a share of the whole device (vLLM, SGLang)", "[models]") {
  // 0.9 x 85,899,345,920 = 77,309,411,328; - 16e9 - 2,147,483,648 = 59,161,927,680 bytes;
  // / 131,072 = 451,369.6 tokens.
  const KvMemory m = memory_of(k_shape + ", utilization: 0.9");
  CHECK(m.bytes_per_token == 131072);
  CHECK(m.capacity_tokens == 451369);
}

TEST_CASE(
    "engine memory: free_gpu_memory_fraction is a share of what the weights leave "
    "(TensorRT-LLM)",
    "[models]") {
  // (85,899,345,920 - 16e9 - 2,147,483,648) x 0.9 = 60,976,676,044.8 bytes; / 131,072 =
  // 465,215.4 tokens: more than utilization 0.9 gives, since the 10% is taken from less.
  CHECK(memory_of(k_shape + ", free_gpu_memory_fraction: 0.9").capacity_tokens == 465215);
  // 0.5: (67,751,862,272 x 0.5) / 131,072 = 258,452.6.
  CHECK(memory_of(k_shape + ", free_gpu_memory_fraction: 0.5").capacity_tokens == 258452);
  try {
    (void)memory_of(k_shape + ", free_gpu_memory_fraction: 0.9, utilization: 0.9");
    FAIL("both were accepted");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("not both"));
  }
}

TEST_CASE("engine memory: the reserve comes off before the KV pool under every rule", "[models]") {
  // The same shape without the reserve (no engine default sets one: docs/schedulers.md).
  const std::string none =
      "accelerator_gib: 80, parameters: 8.0e9, layers: 32, kv_heads: 8, head_dim: 128";
  // vLLM / SGLang: (77,309,411,328 - 16e9) / 131,072 = 467,753.4; the 2 GiB reserve takes
  // 2,147,483,648 / 131,072 = 16,384 tokens off it (451,369 above).
  CHECK(memory_of(none + ", utilization: 0.9").capacity_tokens == 467753);
  CHECK(memory_of(none + ", reserved_gib: 0, utilization: 0.9").capacity_tokens == 467753);
  // TensorRT-LLM: 69,899,345,920 x 0.9 / 131,072 = 479,960.2; the reserve takes 0.9 x 16,384 =
  // 14,745.6 tokens off it (465,215 above): it is taken before the fraction.
  CHECK(memory_of(none + ", free_gpu_memory_fraction: 0.9").capacity_tokens == 479960);
}

TEST_CASE("engine memory: GUARANTEED_NO_EVICT with paged KV reserves prompt + max_output_tokens",
          "[models][schedulers]") {
  // 64 tokens of KV in blocks of 16. Two requests at t = 0 of 10 prompt and 2 output tokens.
  // Without a maximum each needs blocks for 10 + 2 - 1 = 11 tokens: one block each; both run
  // together: prefill 0-10 ms, decode 10-20 ms.
  const std::string rows = "0,10,2\n0,10,2\n";
  const std::string sched = "{kind: trtllm}";
  auto r = run_requests(trace_scenario(rows, k_linear, sched,
                                       "{policy: paged, capacity_tokens: 64, block_size: 16}"));
  CHECK(r[0].finish.count_ns() == ms(20));
  CHECK(r[1].finish.count_ns() == ms(20));
  // max_output_tokens 30: each must be sure of ceil((10 + 30) / 16) = 3 blocks (48 tokens). A
  // takes 1 block at admission and will need 2 more; B would need 48 of the 64 - 16 - 32 = 16
  // left, so it waits until A leaves at 20 ms: prefill 20-30, decode 30-40 ms.
  r = run_requests(trace_scenario(
      rows, k_linear, sched,
      "{policy: paged, capacity_tokens: 64, block_size: 16, max_output_tokens: 30}"));
  CHECK(r[0].finish.count_ns() == ms(20));
  CHECK(r[1].first_admitted.count_ns() == ms(20));
  CHECK(r[1].finish.count_ns() == ms(40));
  // A request asking for more than the maximum is refused at arrival.
  r = run_requests(trace_scenario(
      "0,10,31\n", k_linear, sched,
      "{policy: paged, capacity_tokens: 64, block_size: 16, max_output_tokens: 30}"));
  CHECK(r[0].state == RequestState::Rejected);
  CHECK_THAT(r[0].reject_reason, Catch::Contains("exceed kv.max_output_tokens = 30"));
}

TEST_CASE("engine memory: trtllm-bench's batch and token heuristic", "[schedulers]") {
  using P = std::pair<int64_t, int64_t>;
  // R = 40: batch max(64, 32 x ceil(40/32) = 64) = 64; T = 40 x 2 = 80: max(2048, 256) = 2048.
  CHECK(trtllm_bench_settings(40, 1000, 1000, 1) == P{64, 2048});
  // R = 100: 32 x ceil(3.125) = 128; T = 200: 2048.
  CHECK(trtllm_bench_settings(100, 1000, 1000, 1) == P{128, 2048});
  // R = 600: 128 x ceil(4.69) = 640; T = 600 x (1 + 3) = 2400: 256 x ceil(9.375) = 2560.
  CHECK(trtllm_bench_settings(600, 3000, 1000, 1) == P{640, 2560});
  // R = 1000: 128 x ceil(7.8) = 1024; T = 1000 x 6 = 6000: 512 x ceil(11.7) = 6144.
  CHECK(trtllm_bench_settings(1000, 500, 100, 1) == P{1024, 6144});
  // R = 3000 over 2 stages = 1500: 256 x ceil(5.86) = 1536; T = 3000: 256 x 12 = 3072.
  CHECK(trtllm_bench_settings(3000, 1000, 1000, 2) == P{1536, 3072});
  // Caps: R = min(5000, 4096) = 4096: 256 x 16; T = min(45,056, 32,768) = 32,768.
  CHECK(trtllm_bench_settings(5000, 1000, 100, 1) == P{4096, 32768});
  // Just past each boundary the coarser step applies (R and T are not whole numbers in general):
  // R = 256.5: 128 x ceil(2.004) = 384 (not 32 x ceil(8.02) = 288); T = 513: 2048.
  CHECK(trtllm_bench_settings(256.5, 1000, 1000, 1) == P{384, 2048});
  // R = 1024.5: 256 x ceil(4.002) = 1280 (not 128 x 9 = 1152); T = 2049: 256 x 9 = 2304.
  CHECK(trtllm_bench_settings(1024.5, 1000, 1000, 1) == P{1280, 2304});
  // R = 2048.25, T = 4096.5: 512 x ceil(8.001) = 4608 (not 256 x 17 = 4352).
  CHECK(trtllm_bench_settings(2048.25, 1, 1, 1) == P{2304, 4608});
  // R = 4096, T = 4096 x (1 + 8193 / 8192) = 8192.5: 1024 x 9 = 9216 (not 512 x 17 = 8704).
  CHECK(trtllm_bench_settings(5000, 8193, 8192, 1) == P{4096, 9216});
}

TEST_CASE("engine memory: trtllm_bench_tuning sets the limits not given at the first step",
          "[schedulers]") {
  // KV of 4000 tokens at mean lengths 50 + 50 holds R = 40 requests: max_batch_size 64. Seventy
  // requests (4 + 2 tokens) at t = 0: 64 prefill 0-10 and decode 10-20 ms; the other 6 are
  // admitted when those leave: 20-40 ms. Untuned (max_batch_size 2048) all end at 20 ms.
  std::string rows;
  for (int i = 0; i < 70; ++i) rows += "0,4,2\n";
  const std::string kv = "{policy: paged, capacity_tokens: 4000, block_size: 16}";
  auto r = run_requests(trace_scenario(
      rows, k_linear,
      "{kind: trtllm, trtllm_bench_tuning: {mean_input_tokens: 50, mean_output_tokens: 50}}", kv));
  CHECK(r[63].finish.count_ns() == ms(20));
  CHECK(r[64].finish.count_ns() == ms(40));
  CHECK(r[69].finish.count_ns() == ms(40));
  r = run_requests(trace_scenario(rows, k_linear, "{kind: trtllm}", kv));
  CHECK(r[69].finish.count_ns() == ms(20));
  // A pool that holds not one request of the mean lengths is refused, as trtllm-bench does.
  CHECK_THAT(
      input_error_of(trace_scenario("0,4,2\n", k_linear,
                                    "{kind: trtllm, trtllm_bench_tuning: {mean_input_tokens: 3000, "
                                    "mean_output_tokens: 2000}}",
                                    kv)),
      Catch::Contains("holds no request of the mean lengths"));
  CHECK_THAT(input_error_of(trace_scenario(
                 "0,4,2\n", k_linear,
                 "{kind: trtllm, max_batch_size: 8, max_num_tokens: 64, trtllm_bench_tuning: "
                 "{mean_input_tokens: 5, mean_output_tokens: 5}}",
                 kv)),
             Catch::Contains("nothing is left to tune"));
}

using namespace servesim;

TEST_CASE("engine memory: a trace's max_output_tokens column is each request's own maximum",
          "[models][schedulers]") {
  using test::ms;
  // As above (64 tokens in blocks of 16, two requests of 10 + 2 tokens at t = 0) with the
  // default kv.max_output_tokens 30, but request 1's own maximum is 2: it needs ceil(12 / 16) =
  // 1 block, which fits beside request 0 (1 held + 2 still needed of 4 blocks), so both run
  // 0-20 ms. Request 0's own maximum 6 (ceil(16 / 16) = 1 block) with no default: the same.
  const std::string path = test::write_temp(
      "t.csv", "arrival_s,prompt_tokens,output_tokens,max_output_tokens\n0,10,2,\n0,10,2,2\n");
  const auto run = [&](const std::string& kv) {
    return test::run_requests("workload: {trace: {path: " + path +
                              "}}\nstep_time: {kind: linear, base_ms: 10}\n"
                              "scheduler: {kind: trtllm}\nkv: " +
                              kv + "\n");
  };
  auto r = run("{policy: paged, capacity_tokens: 64, block_size: 16, max_output_tokens: 30}");
  CHECK(r[0].finish.count_ns() == ms(20));
  CHECK(r[1].finish.count_ns() == ms(20));
  CHECK(r[1].spec.max_output_tokens == 2);
  // Under reserve, request 1 holds 1 block and request 0 the default's 3: 4 of 4, both run.
  r = run("{policy: reserve, capacity_tokens: 64, block_size: 16, max_output_tokens: 30}");
  CHECK(r[1].finish.count_ns() == ms(20));
  // A row's own maximum of 1 (the smallest) still overrides the default: under reserve, a
  // 50-token prompt needs ceil(51 / 16) = 4 blocks, all 64 tokens, where the default's 30 would
  // need ceil(80 / 16) = 5 and never fit.
  const std::string one = test::write_temp(
      "o.csv", "arrival_s,prompt_tokens,output_tokens,max_output_tokens\n0,50,1,1\n0,50,1,\n");
  r = test::run_requests("workload: {trace: {path: " + one +
                         "}}\nstep_time: {kind: linear, base_ms: 10}\n"
                         "scheduler: {kind: trtllm}\nkv: {policy: reserve, capacity_tokens: 64, "
                         "block_size: 16, max_output_tokens: 30}\n");
  CHECK(r[0].state == RequestState::Released);
  CHECK(r[0].finish.count_ns() == ms(10));
  CHECK(r[1].state == RequestState::Rejected);
  // A maximum below the row's own output is refused, naming the line.
  const std::string bad = test::write_temp(
      "b.csv", "arrival_s,prompt_tokens,output_tokens,max_output_tokens\n0,10,5,4\n");
  CHECK_THAT(
      test::input_error_of("workload: {trace: {path: " + bad +
                           "}}\nstep_time: {kind: linear, base_ms: 10}\n"
                           "scheduler: {kind: trtllm}\nkv: {policy: paged, "
                           "capacity_tokens: 64}\n"),
      Catch::Contains("b.csv:2: column max_output_tokens = 4 is less than output_tokens = 5"));
}

}  // namespace t_models_engine_memory_test
