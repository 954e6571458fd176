// The LoRA figures (sim/lora.cpp) against the workload and each other: on one seat every step
// serves one request, so the (step, adapter) pairs are the adapted requests' output tokens; each
// GPU-slot miss is a host hit or a host miss; the load time is the misses' copies and disk reads;
// the GEMM time is one adapter read per pair; the busy time is the steps' base time plus both;
// slots enough for every adapter miss once per adapter, one slot misses at every change of
// adapter in service order, and max_cpu_loras 0 holds every adapter in host memory.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "metrics/run_scenario.h"
#include "tests/support.h"

namespace t_sim_lora_identity_test {

using namespace servesim;
using namespace servesim::test;

namespace {

struct Workload {
  std::string rows;
  int64_t adapted = 0, adapted_tokens = 0, changes = 0;
  std::set<int> used;
};

/// 30 requests 1 ms apart, 1 to 4 output tokens, adapters 0 (none) to 4.
Workload workload(uint32_t seed) {
  uint64_t x = seed * 1103515245u + 12345;
  auto next = [&x](int n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  Workload w;
  int last = -1;
  for (int i = 0; i < 30; ++i) {
    const int out = 1 + next(4), a = next(5);
    w.rows += fmt::format("{},{},{},{}\n", i * 0.001, 1 + next(8), out, a);
    if (a == 0) continue;
    ++w.adapted;
    w.adapted_tokens += out;
    w.changes += a != last;
    last = a;
    w.used.insert(a);
  }
  return w;
}

}  // namespace

TEST_CASE("lora identity: hits, misses, load and GEMM time add up to the workload's",
          "[sim][lora][contract]") {
  // 0.1 GB adapters: a copy at 10 GB/s is 10 ms, a disk read at 4 GB/s 25 ms, the GEMMs' read
  // of one adapter at 100 TB/s 0.001 ms (their FLOPs at 10^5 TFLOPS take at most 8 ns).
  const double copy_s = 0.010, disk_s = 0.025, read_s = 1e-6;
  int64_t runs_with_host_hits = 0;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Workload w = workload(seed);
    const std::string path =
        write_temp("lora.csv", "arrival_s,prompt_tokens,output_tokens,adapter\n" + w.rows);
    for (const auto& [slots, host] :
         std::vector<std::pair<int, int>>{{4, 4}, {1, 4}, {2, 2}, {1, 1}, {1, 0}, {2, 0}, {3, 3}}) {
      INFO("seed " << seed << " / max_loras " << slots << " / max_cpu_loras " << host);
      const std::string yaml = fmt::format(
          "workload: {{trace: {{path: {}}}}}\nstep_time: {{kind: linear, base_ms: 1}}\n"
          "scheduler: {{kind: continuous, max_num_seqs: 1}}\n"
          "kv: {{policy: paged, capacity_tokens: 10000, block_size: 4}}\n"
          "lora: {{adapters: 4, max_loras: {}, max_cpu_loras: {}, adapter_bytes: 1.0e8, "
          "host_to_gpu_gbps: 10, disk_gbps: 4, peak_tflops: 1.0e5, peak_memory_gbps: 1.0e5}}\n",
          path, slots, host);
      Scenario sc = build_scenario(doc_of(yaml));
      Simulation sim(std::move(sc.components), /*check=*/true);
      CollectingRecorder rec;
      sim.add_recorder(rec);
      sim.run();
      const RunStats& st = sim.stats();
      REQUIRE(st.lora.has_value());
      const LoraStats& l = *st.lora;
      REQUIRE(rec.requests.size() == 30);
      CHECK(l.requests_with_adapter == w.adapted);
      CHECK(l.gpu_hits + l.gpu_misses == w.adapted_tokens);
      CHECK(l.host_hits + l.host_misses == l.gpu_misses);
      CHECK(l.load_s == Approx(static_cast<double>(l.gpu_misses) * copy_s +
                               static_cast<double>(l.host_misses) * disk_s));
      CHECK(l.compute_s == Approx(static_cast<double>(w.adapted_tokens) * read_s));
      // Each step: 1 ms, plus its loads and reads (each step's time rounded to 1 ns).
      CHECK(std::abs(static_cast<double>(st.busy_ns) -
                     (static_cast<double>(st.steps) * 1e6 + (l.load_s + l.compute_s) * 1e9)) <=
            static_cast<double>(st.steps));
      const auto used = static_cast<int64_t>(w.used.size());
      if (slots >= used) CHECK(l.gpu_misses == used);
      if (slots == 1) CHECK(l.gpu_misses == w.changes);
      if (host >= used) CHECK(l.host_misses == used);
      if (host == 0) CHECK(l.host_misses == 0);  // 0: every adapter is in host memory
      if (host > 0) CHECK(l.host_misses >= used);
      CHECK(l.gpu_misses >= used);
      runs_with_host_hits += l.host_hits > 0;
    }
  }
  CHECK(runs_with_host_hits >= 6);
}

}  // namespace t_sim_lora_identity_test
