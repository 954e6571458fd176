// Constant tables of the sizing layer, entry by entry: MLPerf's Server limits per benchmark
// (sizing/mlperf_server.h), as mlcommons/inference's loadgen/mlperf.conf gives them.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sizing/mlperf_server.h"
#include "tests/support.h"

namespace t_sizing_sizing_tables_test {

using namespace servesim;

TEST_CASE("sizing tables: every MLPerf benchmark's Server TTFT and TPOT limits",
          "[sizing][capacity]") {
  struct Want {
    const char* name;
    int ttft_ms, tpot_ms;
  };
  const std::vector<Want> want{
      {"deepseek-r1", 2000, 80},    {"deepseek-r1-interactive", 1500, 15},
      {"llama2-70b", 2000, 200},    {"llama2-70b-interactive", 450, 40},
      {"llama3_1-405b", 6000, 175}, {"llama3_1-405b-interactive", 4500, 80},
      {"llama3_1-8b", 2000, 100},   {"llama3_1-8b-interactive", 500, 30},
      {"mixtral-8x7b", 2000, 200},
  };
  REQUIRE(mlperf_server_benchmarks().size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(want[i].name);
    const MlperfServerRules& r = mlperf_server_benchmarks()[i];
    CHECK(std::string(r.benchmark) == want[i].name);
    CHECK(r.ttft_limit_ms == want[i].ttft_ms);
    CHECK(r.tpot_limit_ms == want[i].tpot_ms);
    CHECK(&mlperf_server_rules(want[i].name) == &r);
  }
  // The overrides carry the limits, LoadGen's percentile and query count.
  const std::vector<std::string> o =
      mlperf_server_overrides(mlperf_server_rules("deepseek-r1-interactive"), 0.5);
  REQUIRE(o.size() == 3);
  CHECK_THAT(o[0], Catch::StartsWith("slo={ttft_ms: 1500, tpot_ms: 15, percentile: "));
  CHECK(o[1] == "benchmark={kind: mlperf_server, ttft_limit_ms: 1500, tpot_limit_ms: 15}");
  CHECK(o[2] == "workload.synthetic.requests=300");
}

}  // namespace t_sizing_sizing_tables_test
