// KV capacity from kv.memory: model and hardware named from the catalogue, or given as figures.
#include "models/kv_memory.h"

#include <catch2/catch.hpp>

#include "sim/scenario.h"
#include "tests/support.h"

namespace t_models_kv_memory_test {

using namespace servesim;
using namespace test;
namespace {

/// read_kv_memory on `kv: {memory: <flow>}`.
KvMemory memory_of(const std::string& flow) {
  const auto doc = doc_of("kv: {memory: " + flow + "}\n");
  const KvMemory m = read_kv_memory(Cfg::root(doc).child("kv").child("memory"));
  doc->check_all_read();
  return m;
}

std::string error_of(const std::string& flow) {
  try {
    (void)memory_of(flow);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("kv_memory: capacity from a model and a hardware name, worked by hand",
          "[models][kv_memory]") {
  // h100-sxm reports 81,559 MiB = 85,520,809,984 bytes; x 0.9 = 76,968,728,985.6 usable.
  // llama-3.1-8b: 8,030,261,248 bf16 weights = 16,060,522,496 bytes; reserve 2 GiB =
  // 2,147,483,648 bytes; left 58,760,722,841.6. One token: 2 x 32 layers x 8 KV heads x 128 x
  // 2 bytes = 131,072 bytes. floor(58,760,722,841.6 / 131,072) = floor(448,308.74) = 448,308.
  const KvMemory m = memory_of(
      "{model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16, "
      "kv_dtype: bf16, utilization: 0.9, reserved_gib: 2}");
  CHECK(m.capacity_tokens == 448308);
  CHECK(m.bytes_per_token == 131072.0);
  // The same figures given explicitly give the same capacity.
  CHECK(memory_of("{accelerator_gib: 79.6474609375, parameters: 8030261248, layers: 32, "
                  "kv_heads: 8, head_dim: 128, weight_dtype: bf16, reserved_gib: 2}")
            .capacity_tokens == 448308);
  // fp8 KV halves a token (65,536 bytes): floor(58,760,722,841.6 / 65,536) = 896,617.
  const KvMemory fp8 = memory_of(
      "{model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16, "
      "kv_dtype: fp8, reserved_gib: 2}");
  CHECK(fp8.capacity_tokens == 896617);
  CHECK(fp8.bytes_per_token == 65536.0);
}

TEST_CASE("kv_memory: nvfp4 and fp4 weights take 0.5625 and 0.5 bytes a parameter",
          "[models][kv_memory]") {
  // As the first case (76,968,728,985.6 usable, 2 GiB reserve, 131,072 bytes a token), with
  // llama-3.1-8b's 8,030,261,248 weights in nvfp4: 4 bits and one fp8 scale per 16 values,
  // 0.5625 bytes, 4,517,021,952 bytes; left 70,304,223,385.6; / 131,072 = 536,378.66.
  const std::string base = "{model: llama-3.1-8b, hardware: h100-sxm, reserved_gib: 2, ";
  CHECK(memory_of(base + "weight_dtype: nvfp4}").capacity_tokens == 536378);
  // fp4 counts the 4-bit values alone: 4,015,130,624 bytes; left 70,806,114,713.6 -> 540,207.78.
  CHECK(memory_of(base + "weight_dtype: fp4}").capacity_tokens == 540207);
  CHECK(kv_memory_weight_bytes("nvfp4") == 0.5625);
  // The operator model's GEMM variants are accepted too, at their storage size.
  CHECK(memory_of(base + "weight_dtype: fp8_block}").capacity_tokens ==
        memory_of(base + "weight_dtype: fp8}").capacity_tokens);
  // The KV cache keeps the catalogue's dtypes: there is no fp4 KV here.
  CHECK_THAT(error_of(base + "kv_dtype: nvfp4}"), Catch::Contains("kv.memory.kv_dtype"));
  CHECK_THAT(error_of(base + "weight_dtype: fp5}"),
             Catch::Contains("kv.memory.weight_dtype") && Catch::Contains("nvfp4"));
}

TEST_CASE("kv_memory: fewer KV heads than accelerators are replicated, one per accelerator",
          "[models][kv_memory]") {
  // qwen3-235b-a22b on 8 x h200 with fp8 weights: 4 KV heads over 8 accelerators, so each holds
  // one (replicated): 2 x 94 layers x 1 x 128 x 2 bytes = 48,128 bytes a token per accelerator.
  // h200 reports 143,771 MiB = 150,754,820,096 bytes; x 0.9 = 135,679,338,086.4. Weights:
  // 235,093,634,560 x 1 byte / 8 = 29,386,704,320. floor(106,292,633,766.4 / 48,128) = 2,208,540.
  const KvMemory m = memory_of(
      "{model: qwen3-235b-a22b, hardware: h200, tensor_parallel: 8, "
      "weight_dtype: fp8}");
  CHECK(m.bytes_per_token == 48128.0);
  CHECK(m.capacity_tokens == 2208540);
  CHECK(kv_bytes_per_token_per_accelerator(94, 4, 128, 2.0, 2) == 2.0 * 94 * 2 * 128 * 2);
  CHECK_THAT(error_of("{model: llama-3.1-8b, hardware: h100-sxm, tensor_parallel: 3}"),
             Catch::Contains("kv.memory.tensor_parallel = \"3\" at test.yaml:1:73: 3 accelerators "
                             "cannot share 8 KV heads"));
  CHECK_THAT(error_of("{model: qwen3-235b-a22b, hardware: h200, tensor_parallel: 6}"),
             Catch::Contains("6 accelerators cannot share 4 KV heads"));
}

TEST_CASE("kv_memory: a name and a figure for the same thing are refused, naming both",
          "[models][kv_memory]") {
  CHECK_THAT(error_of("{model: llama-3.1-8b, layers: 32, accelerator_gib: 80}"),
             Catch::Contains("kv.memory.layers = \"32\" at test.yaml:1:44: given with "
                             "kv.memory.model (\"llama-3.1-8b\""));
  CHECK_THAT(error_of("{model: llama-3.1-8b, hardware: h100-sxm, accelerator_gib: 80}"),
             Catch::Contains("kv.memory.accelerator_gib = \"80\" at test.yaml:1:73: given with "
                             "kv.memory.hardware (\"h100-sxm\", which reports 79.6474609375 GiB)"));
}

TEST_CASE("kv_memory: unknown names list the catalogue", "[models][kv_memory]") {
  CHECK_THAT(error_of("{model: llama-3.1-9b, hardware: h100-sxm}"),
             Catch::Contains("unknown model \"llama-3.1-9b\" (did you mean llama-3.1-8b?)"));
  CHECK_THAT(error_of("{model: llama-3.1-8b, hardware: h1000}"),
             Catch::Contains("unknown hardware \"h1000\""));
  CHECK_THAT(error_of("{model: llama-3.1-8b}"),
             Catch::Contains("needs exactly one of accelerator_gib, hardware"));
  CHECK_THAT(error_of("{hardware: h100-sxm, layers: 32}"),
             Catch::Contains("needs exactly one of model, parameters"));
}

TEST_CASE("kv_memory: weights or a reserve that leave no room give the numbers",
          "[models][kv_memory]") {
  // llama-3.1-70b in bf16 is 141.11 GB; an h100-sxm has 76.97 GB usable at 0.9.
  CHECK_THAT(error_of("{model: llama-3.1-70b, hardware: h100-sxm}"),
             Catch::Contains("kv.memory.model = \"llama-3.1-70b\" at test.yaml:1:22: the weights "
                             "(141.11 GB) do not fit in 76.97 GB usable accelerator memory "
                             "(h100-sxm's memory_gib of 79.6474609375 x utilization 0.9)"));
  // l4: 23,034 MiB x 0.9 = 20.24 GiB usable; llama-3.1-8b's weights 14.96 GiB; 6 GiB more is
  // too much.
  CHECK_THAT(error_of("{model: llama-3.1-8b, hardware: l4, reserved_gib: 6}"),
             Catch::Contains("kv.memory.reserved_gib = \"6\" at test.yaml:1:64: the reserve (6.00 "
                             "GiB) and the weights (14.96 GiB) leave no room for KV in 20.24 GiB"));
  CHECK(error_of("{model: llama-3.1-8b, hardware: l4, reserved_gib: 5}") == "(no error)");
  CHECK_THAT(error_of("{model: llama-3.1-8b, hardware: l4, reserved_gib: -1}"),
             Catch::Contains("must be >= 0"));
}

TEST_CASE("kv_memory: a scenario sized from names runs, and swap takes its bytes from the pool",
          "[models][kv_memory]") {
  const std::string step = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
  const std::string kv =
      "{policy: paged, block_size: 16, memory: {model: llama-3.1-8b, "
      "hardware: h100-sxm, reserved_gib: 2}}";
  CHECK(input_error_of(trace_scenario("0,100,4\n", step,
                                      "{kind: continuous, max_num_seqs: 4, preemption_mode: swap, "
                                      "swap_bandwidth_gb_s: 25}",
                                      kv)) == "(no error)");
  const Scenario sc = build_scenario(
      doc_of(trace_scenario("0,100,4\n", step, "{kind: continuous, max_num_seqs: 4}", kv)));
  // 448,308 tokens, rounded down to whole 16-token blocks: 28,019 x 16 = 448,304.
  CHECK(sc.components.replicas[0].kv->capacity_tokens() == 448304);
  CHECK(sc.components.replicas[0].kv->bytes_per_token() == 131072.0);
}

}  // namespace t_models_kv_memory_test
