// The sweep file's ranges (sizing/sweep.cpp) at both ends and one past each: max_replicas, the
// SLO's targets, percentile and min_attainment. Accepted at the end, refused one past it with
// the key named.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "sizing/sweep.h"
#include "tests/support.h"

namespace t_sizing_sweep_config_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Loads a sweep of `rest` (top-level keys after base) over a small synthetic base; "" when it
// loads, else the error.
std::string sweep_error(const std::string& rest) {
  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "base.yaml")
      << "workload: {synthetic: {requests: 4, arrival: {kind: fixed, rate_per_s: 4},\n"
         "  prompt_tokens: {kind: fixed, value: 20}, output_tokens: {kind: fixed, value: 5}}}\n"
         "step_time: {kind: linear, base_ms: 8, per_seq_ms: 2}\n"
         "scheduler: {kind: continuous, max_num_seqs: 8}\n"
         "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n";
  std::ofstream(dir / "s.yaml") << "base: base.yaml\n" << rest;
  try {
    (void)load_sweep((dir / "s.yaml").string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep config edges: max_replicas from 1 to 4096", "[sizing][size]") {
  const std::string slo = "slo: {ttft_ms: 500}\nmode: min_replicas\n";
  CHECK(sweep_error(slo + "max_replicas: 1\n") == "");
  CHECK(sweep_error(slo + "max_replicas: 4096\n") == "");
  CHECK_THAT(sweep_error(slo + "max_replicas: 0\n"),
             Catch::Contains("max_replicas") && Catch::Contains("4096"));
  CHECK_THAT(sweep_error(slo + "max_replicas: 4097\n"),
             Catch::Contains("max_replicas") && Catch::Contains("4096"));
}

TEST_CASE("sweep config edges: SLO targets above 0 to 1e9 ms, percentile above 0 to 100",
          "[sizing][size]") {
  for (const char* key : {"ttft_ms", "tpot_ms", "e2e_ms", "itl_ms"}) {
    INFO(key);
    const std::string k = key;
    CHECK(sweep_error("slo: {" + k + ": 1e9}\n") == "");
    CHECK(sweep_error("slo: {" + k + ": 0.001}\n") == "");
    CHECK_THAT(sweep_error("slo: {" + k + ": 0}\n"), Catch::Contains("slo." + k));
    CHECK_THAT(sweep_error("slo: {" + k + ": 1.000001e9}\n"), Catch::Contains("slo." + k));
  }
  CHECK(sweep_error("slo: {ttft_ms: 5, percentile: 100}\n") == "");
  CHECK(sweep_error("slo: {ttft_ms: 5, percentile: 0.001}\n") == "");
  CHECK_THAT(sweep_error("slo: {ttft_ms: 5, percentile: 0}\n"), Catch::Contains("slo.percentile"));
  CHECK_THAT(sweep_error("slo: {ttft_ms: 5, percentile: 100.001}\n"),
             Catch::Contains("slo.percentile"));
  CHECK(sweep_error("slo: {ttft_ms: 5, min_attainment: 0}\n") == "");
  CHECK(sweep_error("slo: {ttft_ms: 5, min_attainment: 1}\n") == "");
  CHECK_THAT(sweep_error("slo: {ttft_ms: 5, min_attainment: -0.001}\n"),
             Catch::Contains("slo.min_attainment"));
  CHECK_THAT(sweep_error("slo: {ttft_ms: 5, min_attainment: 1.001}\n"),
             Catch::Contains("slo.min_attainment"));
}

TEST_CASE("sweep config edges: the SLO override names each target given, in order",
          "[sizing][size]") {
  SweepSlo s;
  CHECK(s.override_text() == "slo={percentile: 99}");
  s.itl_ms = 4;
  CHECK(s.override_text() == "slo={itl_ms: 4, percentile: 99}");
  s.e2e_ms = 3;
  s.percentile = 90.5;
  CHECK(s.override_text() == "slo={e2e_ms: 3, itl_ms: 4, percentile: 90.5}");
  s.ttft_ms = 1;
  s.tpot_ms = 2.5;
  CHECK(s.override_text() ==
        "slo={ttft_ms: 1, tpot_ms: 2.5, e2e_ms: 3, itl_ms: 4, percentile: 90.5}");
}

}  // namespace t_sizing_sweep_config_edges_test
