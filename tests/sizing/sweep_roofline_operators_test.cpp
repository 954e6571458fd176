// A sizing sweep over accelerators whose base times steps with the operator model's roofline
// source (sizing/sweep.cpp): every chip keeps that source, so no point rewrites
// step_time.operators; only a base on the tables source has its tables swapped per chip.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sizing/sweep.h"
#include "tests/support.h"

namespace t_sizing_sweep_roofline_operators_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("sweep: a base on the roofline operator source keeps it on every accelerator",
          "[sizing][sweep]") {
  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "base.yaml")
      << "workload: {synthetic: {requests: 4, arrival: {kind: fixed, rate_per_s: 4},\n"
         "  prompt_tokens: {kind: fixed, value: 20}, output_tokens: {kind: fixed, value: 5}}}\n"
         "step_time: {kind: operator, model: llama-3.1-8b, hardware: h100-sxm,\n"
         "  operators: {source: roofline}}\n"
         "scheduler: {kind: continuous, max_num_seqs: 8}\n"
         "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n";
  // h200 has AIConfigurator tables in the catalogue (tables: h200_sxm), mi300x has none.
  std::ofstream(dir / "s.yaml") << "base: base.yaml\nprice_tier: mixed\nslo: {ttft_ms: 500}\n"
                                   "axes:\n  accelerator: [h200, mi300x]\n";
  const SweepSpec spec = load_sweep((dir / "s.yaml").string());
  REQUIRE(spec.point_count() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<std::string> o = spec.overrides(i);
    INFO("point " << i);
    CHECK(std::find(o.begin(), o.end(),
                    i == 0 ? "step_time.hardware=h200" : "step_time.hardware=mi300x") != o.end());
    for (const std::string& x : o) CHECK(x.rfind("step_time.operators=", 0) == std::string::npos);
    CHECK(spec.step_source(i) == "operator:roofline");
  }
}

}  // namespace t_sizing_sweep_roofline_operators_test
