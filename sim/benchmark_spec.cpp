#include "sim/benchmark_spec.h"

#include <array>
#include <utility>

namespace servesim {
namespace {

// Sorted by name.
constexpr std::array<std::pair<const char*, BenchmarkKind>, 4> k_kinds{{
    {"mlperf_offline", BenchmarkKind::MlperfOffline},
    {"mlperf_server", BenchmarkKind::MlperfServer},
    {"trtllm_bench", BenchmarkKind::TrtllmBench},
    {"vllm_bench", BenchmarkKind::VllmBench},
}};

constexpr RealRange k_limit_ms{0.0, 1e9, true};

}  // namespace

std::optional<BenchmarkSpec> read_benchmark(const Cfg& root) {
  const std::optional<Cfg> c = root.optional_child("benchmark");
  if (!c) return std::nullopt;
  BenchmarkSpec b;
  const std::string kind = c->get_choice("kind", benchmark_kind_names());
  for (const auto& [name, k] : k_kinds)
    if (kind == name) b.kind = k;
  if (b.kind == BenchmarkKind::MlperfServer) {
    // MLPerf's server scenario is judged on both limits; neither has a default that fits
    // every model, so both are required.
    b.ttft_limit_ms = c->get_real("ttft_limit_ms", k_limit_ms);
    b.tpot_limit_ms = c->get_real("tpot_limit_ms", k_limit_ms);
    b.percentile = c->get_real("percentile", 99.0, {0.0, 100.0, true});
    if (b.percentile >= 100)
      c->fail("percentile", "must be < 100 (the sorted index n x p/100 must be a sample)");
  } else {
    for (const char* key : {"ttft_limit_ms", "tpot_limit_ms", "percentile"})
      if (c->has(key))
        c->fail(key,
                "only kind: mlperf_server has latency limits (use the slo section to check "
                "targets in other runs)");
  }
  return b;
}

std::vector<std::string> benchmark_kind_names() {
  std::vector<std::string> out;
  for (const auto& e : k_kinds) out.emplace_back(e.first);
  return out;
}

const char* benchmark_kind_name(BenchmarkKind kind) {
  switch (kind) {
    case BenchmarkKind::MlperfOffline:
      return "mlperf_offline";
    case BenchmarkKind::MlperfServer:
      return "mlperf_server";
    case BenchmarkKind::TrtllmBench:
      return "trtllm_bench";
    case BenchmarkKind::VllmBench:
      return "vllm_bench";
  }
  return "";
}

}  // namespace servesim
