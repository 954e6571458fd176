// The per-step loop allocates nothing: `servesim run` on the same 64 requests with 10x longer
// outputs (about 10x the steps) must make about as many heap allocations, whatever the scheduler.
// The whole command is counted (reading the config and tables, the run, writing its files): what
// depends on the requests or on the tables is the same in both runs, so a difference is steps.
// A buffer that grows by doubling adds a few: the run's (the kept inter-token gaps, the step
// ends) and each request's (its KV block list under prefix caching, about 2 each over 10x the
// blocks); one allocation a step adds about 900. Its own executable: it replaces the global
// operator new.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "tests/test_paths.h"

namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

namespace fs = std::filesystem;

constexpr int k_requests = 64;
// Allowed growth of the count from the short run to the long one (~900 steps more): doublings of
// the run's buffers and of each request's, 4 a request.
constexpr int64_t k_allowed_extra = 4 * k_requests;

struct Variant {
  std::string scheduler, kv;
};

int64_t count_run(const fs::path& dir, const Variant& v, int output_tokens) {
  const fs::path trace = dir / ("trace" + std::to_string(output_tokens) + ".csv");
  {
    std::ofstream t(trace);
    t << "arrival_s,prompt_tokens,output_tokens\n";
    for (int i = 0; i < k_requests; ++i)
      t << i * 0.01 << ',' << 100 + 7 * i << ',' << output_tokens << '\n';
  }
  const fs::path config = dir / "run.yaml";
  {
    std::ofstream c(config);
    c << "workload: {trace: {path: " << trace.string() << "}}\n"
      << "step_time: {kind: operator, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16,"
      << " operators: {source: tables, path: " << SERVESIM_SOURCE_DIR
      << "/data/timings/aiconfigurator, gpu: h100_sxm, engine: vllm}}\n"
      << "scheduler: " << v.scheduler << "\nkv: " << v.kv << "\nseed: 1\n";
  }
  const fs::path out = dir / "out";
  fs::remove_all(out);
  std::ostringstream o, e;
  const int64_t before = g_allocations.load();
  const int code = servesim::run_cli({"run", config.string(), "--out", out.string(), "-q"}, o, e);
  const int64_t n = g_allocations.load() - before;
  if (code != 0) {
    std::cerr << "servesim run failed (" << code << "): " << e.str() << '\n';
    std::exit(1);
  }
  return n;
}

}  // namespace

int main() {
  const fs::path dir = fs::temp_directory_path() / ("servesim_alloc_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string paged = "{policy: paged, block_size: 16, capacity_tokens: 200000}";
  const std::vector<Variant> variants = {
      {"{kind: continuous, max_num_seqs: 64, max_num_batched_tokens: 8192, chunked_prefill: true}",
       paged},
      {"{kind: vllm, max_num_seqs: 64, max_num_batched_tokens: 8192}",
       "{policy: paged, block_size: 16, capacity_tokens: 200000, prefix_caching: true}"},
      {"{kind: sglang, max_running_requests: 64}", paged},
      {"{kind: trtllm, max_batch_size: 64, max_num_tokens: 8192}", paged},
      // Fair share plans every step (no decode streaks): the planning path, step by step.
      {"{kind: continuous, max_num_seqs: 64, policy: fair}", paged},
      // KV short of the batch: requests preempted and recomputed.
      {"{kind: continuous, max_num_seqs: 64}",
       "{policy: paged, block_size: 16, capacity_tokens: 20000}"},
  };
  int failures = 0;
  for (const Variant& v : variants) {
    (void)count_run(dir, v, 20);  // warm: tables read, caches written
    const int64_t short_run = count_run(dir, v, 100);
    const int64_t long_run = count_run(dir, v, 1000);
    const bool ok = long_run - short_run <= k_allowed_extra;
    std::printf("%s %s: %lld allocations with 100 output tokens, %lld with 1000 (+%lld)\n",
                ok ? "ok  " : "FAIL", v.scheduler.c_str(), static_cast<long long>(short_run),
                static_cast<long long>(long_run), static_cast<long long>(long_run - short_run));
    failures += ok ? 0 : 1;
  }
  fs::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
