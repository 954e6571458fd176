// The KV bytes a prefill pool hands to the decode pool for each prompt token when
// cluster.kv_transfer gives no kv_bytes_per_token (sim/cluster.cpp): from the pool's kv.memory
// shape (2 x layers x kv_heads x head_dim x the KV dtype's bytes), from kv.memory's catalogue
// model, else from a roofline step_time model's catalogue entry; and a pool left with no kv
// section anywhere is refused by name.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_sim_kv_transfer_bytes_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// One request of a 100-token prompt through a prefill and a decode pool; `engine` gives the
// step_time and kv sections.
std::string disagg(const std::string& engine) {
  return "workload: {trace: {path: " +
         write_temp("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,2\n") + "}}\n" +
         "scheduler: {kind: continuous, max_num_seqs: 8}\n" + engine +
         "cluster:\n  router: {kind: round_robin}\n"
         "  decode_router: {kind: round_robin}\n"
         "  pools:\n"
         "    - {name: p, role: prefill, replicas: 1}\n"
         "    - {name: d, role: decode, replicas: 1}\n"
         "  kv_transfer: {bandwidth_gb_s: 1, latency_us: 0}\n";
}

double bytes_moved(const std::string& engine) {
  const RunOutput out = run_scenario(doc_of(disagg(engine)));
  REQUIRE(out.summary.kv_transfer);
  CHECK(out.summary.kv_transfer->transfers == 1);
  return out.summary.kv_transfer->bytes;
}

const std::string k_linear = "step_time: {kind: linear, base_ms: 10}\n";
const std::string k_memory =
    "kv: {policy: paged, block_size: 16, memory: {accelerator_gib: 80, parameters: 1000000, "
    "weight_dtype: bf16, layers: 2, kv_heads: 3, head_dim: 64";

}  // namespace

TEST_CASE("kv transfer bytes: a pool's kv.memory shape gives 2 x layers x heads x dim x dtype",
          "[sim][disagg]") {
  // 2 x 2 layers x 3 heads x 64 x 2 bytes (fp16 by default) = 1,536 bytes a token, 100 tokens.
  CHECK(bytes_moved(k_linear + k_memory + "}}\n") == 153600);
  // fp8 KV: 1 byte an element.
  CHECK(bytes_moved(k_linear + k_memory + ", kv_dtype: fp8}}\n") == 76800);
}

TEST_CASE("kv transfer bytes: a catalogue model in kv.memory or a roofline step_time sizes it",
          "[sim][disagg]") {
  // llama-3.1-8b: 32 layers, 8 KV heads of 128: 2 x 32 x 8 x 128 x 2 = 131,072 bytes a token.
  CHECK(bytes_moved(k_linear +
                    "kv: {policy: paged, block_size: 16, memory: {accelerator_gib: 80, model: "
                    "llama-3.1-8b, weight_dtype: bf16}}\n") == 13107200);
  CHECK(bytes_moved(k_linear +
                    "kv: {policy: paged, block_size: 16, memory: {accelerator_gib: 80, model: "
                    "llama-3.1-8b, weight_dtype: bf16, kv_dtype: fp8}}\n") == 6553600);
  const std::string kv = "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n";
  // The roofline model's KV dtype defaults to its weight dtype (bf16: 2 bytes), fp8 halves it.
  CHECK(bytes_moved("step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\n" +
                    kv) == 13107200);
  CHECK(bytes_moved("step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, "
                    "weight_dtype: fp8}\n" +
                    kv) == 6553600);
  CHECK(bytes_moved("step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, "
                    "kv_dtype: fp8}\n" +
                    kv) == 6553600);
}

TEST_CASE("kv transfer bytes: without a kv size anywhere, or a kv section, the pool is refused",
          "[sim][disagg]") {
  const std::string kv = "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n";
  CHECK_THAT(input_error_of(disagg(k_linear + kv)),
             Catch::Contains("KV size per token is unknown") &&
                 Catch::Contains("cluster.kv_transfer.kv_bytes_per_token"));
  // No top-level kv and none in the pools.
  CHECK_THAT(input_error_of(disagg(k_linear)),
             Catch::Contains("pool \"p\" gives no kv section and the scenario has none at the "
                             "top level"));
}

}  // namespace t_sim_kv_transfer_bytes_test
