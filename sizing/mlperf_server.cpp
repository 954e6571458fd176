#include "sizing/mlperf_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/errors.h"

namespace servesim {
namespace {

// mlcommons/inference loadgen/mlperf.conf (read at 001712e9daf8): `<benchmark>.Server.ttft_latency`
// and `tpot_latency`. The interactive variants are Server runs with tighter limits.
constexpr std::array<MlperfServerRules, 9> k_rules{{
    {"deepseek-r1", 2000, 80},
    {"deepseek-r1-interactive", 1500, 15},
    {"llama2-70b", 2000, 200},
    {"llama2-70b-interactive", 450, 40},
    {"llama3_1-405b", 6000, 175},
    {"llama3_1-405b-interactive", 4500, 80},
    {"llama3_1-8b", 2000, 100},
    {"llama3_1-8b-interactive", 500, 30},
    {"mixtral-8x7b", 2000, 200},
}};

}  // namespace

std::span<const MlperfServerRules> mlperf_server_benchmarks() { return k_rules; }

const MlperfServerRules& mlperf_server_rules(const std::string& benchmark) {
  for (const MlperfServerRules& r : k_rules)
    if (r.benchmark == benchmark) return r;
  std::string names;
  for (const MlperfServerRules& r : k_rules)
    names += fmt::format("{}{}", names.empty() ? "" : ", ", r.benchmark);
  throw InputError(
      fmt::format("--mlperf \"{}\": not an MLPerf LLM benchmark with Server limits (valid: {})",
                  benchmark, names));
}

int64_t loadgen_query_count(double rate_per_s, double min_duration_s) {
  const double n = std::ceil(rate_per_s * min_duration_s);
  return std::max<int64_t>(k_loadgen_min_query_count, static_cast<int64_t>(n));
}

std::vector<std::string> mlperf_server_overrides(const MlperfServerRules& r, double rate_per_s,
                                                 double min_duration_s) {
  return {fmt::format("slo={{ttft_ms: {}, tpot_ms: {}, percentile: {}}}", r.ttft_limit_ms,
                      r.tpot_limit_ms, k_loadgen_percentile),
          fmt::format("benchmark={{kind: mlperf_server, ttft_limit_ms: {}, tpot_limit_ms: {}}}",
                      r.ttft_limit_ms, r.tpot_limit_ms),
          fmt::format("workload.synthetic.requests={}",
                      loadgen_query_count(rate_per_s, min_duration_s))};
}

}  // namespace servesim
