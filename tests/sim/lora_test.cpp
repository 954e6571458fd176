// Multi-LoRA (sim/lora.h): adapter loads worked out by hand under a linear step model, the
// per-step adapter limit, the popularity draws, lora_affinity routing and bad sections.
#include "sim/lora.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_sim_lora_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 x sequences + 0.5 x prefill tokens.
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_vllm = "{kind: vllm, enable_prefix_caching: false}";
const std::string k_kv = "{policy: paged, capacity_tokens: 100000, block_size: 16}";
// 1 GB adapters: a copy at 10 GB/s is 100 ms, a disk load at 4 GB/s 250 ms. The GEMMs read each
// of a step's adapters once at 100 TB/s, 0.01 ms an adapter (their FLOPs at 100 PFLOP/s take
// under 0.0001 ms for these few tokens, so the read sets the time).
std::string lora_section(int adapters, int max_loras, int max_cpu_loras) {
  return fmt::format(
      "lora: {{adapters: {}, max_loras: {}, max_cpu_loras: {}, adapter_bytes: 1.0e9, "
      "host_to_gpu_gbps: 10, disk_gbps: 4, peak_tflops: 1.0e5, peak_memory_gbps: 1.0e5}}\n",
      adapters, max_loras, max_cpu_loras);
}

using Run = CheckedRun;

Run run(const std::string& yaml) { return run_checked(yaml); }

// A trace with an adapter column: rows "arrival_s,prompt,output,adapter".
std::string with_adapters(const std::string& rows, const std::string& extra,
                          const std::string& scheduler = k_vllm) {
  const std::string path =
      write_temp("lora.csv", "arrival_s,prompt_tokens,output_tokens,adapter\n" + rows);
  return "workload: {trace: {path: " + path + "}}\nstep_time: " + k_linear +
         "\nscheduler: " + scheduler + "\nkv: " + k_kv + "\n" + extra;
}

}  // namespace

TEST_CASE("lora: an adapter miss adds its load time once", "[sim][lora]") {
  // t=0       prefill 4: 2 + 1 + 2 = 5 ms, adapter 1's copy 100 ms, its read 0.01 ms -> 105.01
  // t=105.01  decode 3 + 0.01 -> 108.02; -> 111.03 (3 tokens)
  // t=200     the second request, same adapter, still in its slot: 5.01, 3.01, 3.01 -> 211.03
  const Run r = run(with_adapters("0,4,3,1\n0.2,4,3,1\n", lora_section(1, 1, 0)));
  REQUIRE(r.requests.size() == 2);
  CHECK(r.requests[0].first_token.count_ns() == ms(105.01));
  CHECK(r.requests[0].finish.count_ns() == ms(111.03));
  CHECK(r.requests[1].first_token.count_ns() == ms(205.01));
  CHECK(r.requests[1].finish.count_ns() == ms(211.03));
  REQUIRE(r.stats.lora);
  CHECK(r.stats.lora->gpu_misses == 1);
  CHECK(r.stats.lora->gpu_hits == 5);
  CHECK(r.stats.lora->host_misses == 0);
  CHECK(r.stats.lora->load_s == Approx(0.1));
  CHECK(r.stats.lora->compute_s == Approx(6 * 0.01e-3));
  CHECK(r.stats.lora->requests_with_adapter == 2);
  // The base model (adapter 0) loads and computes nothing more.
  const Run base = run(with_adapters("0,4,3,0\n", lora_section(1, 1, 0)));
  CHECK(base.requests[0].finish.count_ns() == ms(11));
  CHECK(base.stats.lora->gpu_misses == 0);
  CHECK(base.stats.lora->requests_with_adapter == 0);
}

TEST_CASE("lora: a host-cache miss adds the disk load before the copy", "[sim][lora]") {
  // max_cpu_loras 1 holds one adapter in host memory. t=0: adapter 1 from disk (250 ms) and
  // copied (100 ms): 5 + 350 + 0.01 -> 355.01, then 358.02, 361.03. t=1 s: adapter 2 evicts 1
  // from both caches: 1361.03. t=2 s: adapter 1 again, from disk again: 2361.03.
  const std::string rows = "0,4,3,1\n1,4,3,2\n2,4,3,1\n";
  const Run r = run(with_adapters(rows, lora_section(2, 1, 1)));
  CHECK(r.requests[0].first_token.count_ns() == ms(355.01));
  CHECK(r.requests[0].finish.count_ns() == ms(361.03));
  CHECK(r.requests[1].finish.count_ns() == ms(1361.03));
  CHECK(r.requests[2].finish.count_ns() == ms(2361.03));
  CHECK(r.stats.lora->host_misses == 3);
  CHECK(r.stats.lora->gpu_misses == 3);
  // max_cpu_loras 2: the third request finds adapter 1 in host memory, a copy only.
  const Run kept = run(with_adapters(rows, lora_section(2, 1, 2)));
  CHECK(kept.requests[2].finish.count_ns() == ms(2111.03));
  CHECK(kept.stats.lora->host_misses == 2);
  CHECK(kept.stats.lora->host_hits == 1);
}

TEST_CASE("lora: max_loras 1 serialises two adapters queued together", "[sim][lora]") {
  // t=0       A (adapter 1) prefills, B (adapter 2) is passed over: 5 + 100 + 0.01 -> 105.01
  // t=105.01  A decodes, B passed over -> 108.02; -> 111.03, A done
  // t=111.03  B prefills, adapter 2 replaces 1 in the slot: 105.01 -> 216.04; 219.05; 222.06
  const std::string rows = "0,4,3,1\n0,4,3,2\n";
  const Run one = run(with_adapters(rows, lora_section(2, 1, 0)));
  CHECK(one.requests[0].finish.count_ns() == ms(111.03));
  CHECK(one.requests[1].first_token.count_ns() == ms(216.04));
  CHECK(one.requests[1].finish.count_ns() == ms(222.06));
  CHECK(one.stats.lora->skipped_for_slots == 3);
  CHECK(one.stats.lora->gpu_misses == 2);
  // max_loras 2: one batch, both copied before it: 2 + 2 + 4 + 200 + 0.02 -> 208.02; then
  // 4.02 ms decodes -> 212.04, 216.06.
  const Run two = run(with_adapters(rows, lora_section(2, 2, 0)));
  CHECK(two.requests[0].finish.count_ns() == ms(216.06));
  CHECK(two.requests[1].finish.count_ns() == ms(216.06));
  CHECK(two.stats.lora->skipped_for_slots == 0);
  // continuous, sglang and trtllm keep B out of A's steps too.
  for (const std::string scheduler :
       {"{kind: continuous, max_num_seqs: 8}", "{kind: sglang}", "{kind: trtllm}"}) {
    INFO(scheduler);
    const Run other = run(with_adapters(rows, lora_section(2, 1, 0), scheduler));
    CHECK(other.requests[1].first_token > other.requests[0].finish);
    CHECK(other.stats.lora->skipped_for_slots >= 1);
  }
}

TEST_CASE("lora: zipf draws are a function of seed and request id with zipf's shares",
          "[sim][lora]") {
  const auto doc = doc_of(
      "lora: {adapters: 10, popularity: {kind: zipf, alpha: 1.0}, fraction: 0.5, "
      "adapter_bytes: 1000}\n");
  const auto spec = read_lora(Cfg::root(doc), nullptr);
  REQUIRE(spec);
  std::vector<int64_t> count(11, 0);
  constexpr int64_t n = 200'000;
  for (uint64_t id = 0; id < n; ++id) ++count[spec->draw(7, id)];
  CHECK(spec->draw(7, 12345) == spec->draw(7, 12345));
  // Half use an adapter; adapter k gets 1 / (k x H_10) of those, H_10 = 2.928968.
  CHECK(static_cast<double>(count[0]) / n == Approx(0.5).margin(0.005));
  const double with = static_cast<double>(n - count[0]);
  for (int k = 1; k <= 10; ++k)
    CHECK(static_cast<double>(count[k]) / with == Approx(1.0 / (k * 2.928968)).margin(0.005));
  // Exact for this seed (a change of the draw shows here).
  CHECK(count[0] == 100208);
  CHECK(count[1] == 34104);
}

TEST_CASE("lora: lora_affinity sends a request where its adapter is resident", "[sim][lora]") {
  // r0 (adapter 1) -> replica 0, r1 (adapter 2) -> the less loaded replica 1; at t=1 both are
  // idle and r2 (adapter 2) goes where adapter 2 sits in a GPU slot: replica 1. Round robin
  // would send it to replica 0.
  const std::string rows = "0,4,3,1\n0,4,3,2\n1,4,3,2\n";
  const std::string lora = lora_section(2, 1, 0);
  const Run a =
      run(with_adapters(rows, lora + "cluster: {replicas: 2, router: {kind: lora_affinity}}\n"));
  CHECK(a.requests[0].replica == 0);
  CHECK(a.requests[1].replica == 1);
  CHECK(a.requests[2].replica == 1);
  CHECK(a.stats.lora->gpu_misses == 2);
  const Run rr =
      run(with_adapters(rows, lora + "cluster: {replicas: 2, router: {kind: round_robin}}\n"));
  CHECK(rr.requests[2].replica == 0);
  CHECK(rr.stats.lora->gpu_misses == 3);
}

TEST_CASE("lora: adapters sized from the model adapt a gate only where the MLP has one",
          "[sim][lora]") {
  // Rank 16, target_modules all, 2 bytes a weight. Llama 3.1 8B (d 4096, 32 x 128 query and
  // 8 x 128 KV heads, MLP 14336, gated): q, o 2 x 8192, k, v 2 x 5120, gate, up 2 x 18432,
  // down 18432 = 81920 a layer (docs/lora.md's 83.9 MB). OPT-13B (d 5120, 40 x 128 heads, MLP
  // 20480, plain): q, k, v, o 4 x 10240, up 25600, down 25600 = 92160 a layer (with a gate,
  // 117760), over 40 layers.
  const auto spec = [](const std::string& model) {
    const auto doc = doc_of("step_time: {kind: roofline, model: " + model +
                            ", hardware: h100-sxm}\nlora: {adapters: 2, target_modules: all, "
                            "peak_tflops: 1, peak_memory_gbps: 1}\n");
    const Cfg root = Cfg::root(doc);
    const Cfg step_time = root.child("step_time");
    return read_lora(root, &step_time);
  };
  CHECK(spec("llama-3.1-8b")->adapter_bytes == 16.0 * 81920 * 32 * 2);
  CHECK(spec("opt-13b")->adapter_bytes == 16.0 * 92160 * 40 * 2);
}

TEST_CASE("lora: bad sections name the key and what is allowed", "[sim][lora]") {
  const std::string base = with_adapters("0,4,3,1\n", "");
  CHECK_THAT(input_error_of(base + "lora: {adapters: 0, adapter_bytes: 1000, peak_tflops: 1, "
                                   "peak_memory_gbps: 1}\n"),
             Catch::Contains("lora.adapters") && Catch::Contains("from 1 to 1000000"));
  CHECK_THAT(input_error_of(base + "lora: {adapters: 4, popularity: {kind: pareto}, "
                                   "adapter_bytes: 1000, peak_tflops: 1, peak_memory_gbps: 1}\n"),
             Catch::Contains("lora.popularity.kind") && Catch::Contains("uniform, zipf"));
  CHECK_THAT(input_error_of(base + "lora: {adapters: 4, max_loras: 4, max_cpu_loras: 2, "
                                   "adapter_bytes: 1000, peak_tflops: 1, peak_memory_gbps: 1}\n"),
             Catch::Contains("lora.max_cpu_loras") && Catch::Contains("at least max_loras = 4"));
  CHECK_THAT(input_error_of(base + "lora: {adapters: 4}\n"),
             Catch::Contains("lora.target_modules") && Catch::Contains("step_time.model"));
  CHECK_THAT(input_error_of(base + "lora: {adapters: 4, adapter_bytes: 1000}\n"),
             Catch::Contains("lora.peak_tflops") && Catch::Contains("roofline"));
  CHECK_THAT(input_error_of(with_adapters("0,4,3,9\n", lora_section(2, 1, 0))),
             Catch::Contains("adapter 9 is above lora.adapters = 2"));
}

}  // namespace t_sim_lora_test
