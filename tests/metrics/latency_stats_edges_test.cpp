// latency_stats (metrics/exports.h), which every export's mean, std, median and percentiles come
// from, on values with a large mean and a small spread: numpy's two-pass standard deviation
// (around the mean), which a one-pass sum of squares would miss by rounding, and the other
// figures exactly.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "metrics/exports.h"
#include "tests/support.h"

namespace t_metrics_latency_stats_edges_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("latency stats edges: the standard deviation is taken around the mean, in two passes",
          "[metrics]") {
  // Given in any order; numpy: mean 1000000.325, std 0.22776083947030162 (two passes). Summing
  // (v - mean)(v + mean) instead, algebraically the same, gives 0.22788... by rounding.
  const LatencyStats s = latency_stats({1e6 + 0.7, 1e6 + 0.1, 1e6 + 0.3, 1e6 + 0.2}, {0, 25, 100});
  CHECK(s.count == 4);
  CHECK(s.mean == Approx(1000000.325).epsilon(1e-15));
  CHECK(s.std == Approx(0.22776083947030162).epsilon(1e-9));
  CHECK(s.median == Approx(1e6 + 0.25).epsilon(1e-15));
  CHECK(s.max == 1e6 + 0.7);
  REQUIRE(s.percentiles.size() == 3);
  CHECK(s.percentiles[0] == std::pair<double, double>(0, 1e6 + 0.1));
  CHECK(s.percentiles[1].second == Approx(1e6 + 0.175).epsilon(1e-15));
  CHECK(s.percentiles[2] == std::pair<double, double>(100, 1e6 + 0.7));
  // No values: zeros, each percentile asked for at 0.
  const LatencyStats none = latency_stats({}, {50});
  CHECK(none.count == 0);
  CHECK(none.std == 0);
  CHECK(none.max == 0);
  REQUIRE(none.percentiles.size() == 1);
  CHECK(none.percentiles[0].second == 0);
  // One value: no spread.
  const LatencyStats one = latency_stats({3.5}, {});
  CHECK(one.mean == 3.5);
  CHECK(one.std == 0);
  CHECK(one.median == 3.5);
}

TEST_CASE("latency stats edges: requests that all arrive at once have an offered rate of inf",
          "[metrics]") {
  for (const std::string& rows : {std::string("0,1,2\n0,1,2\n"), std::string("0.5,1,2\n")}) {
    INFO(rows);
    TokenTimes tokens;
    RunOptions o;
    o.no_requests_csv = true;
    o.step_observers.push_back(&tokens);
    o.request_recorders.push_back(&tokens);
    const RunOutput out = run_scenario(
        build_scenario(doc_of(trace_scenario(
            rows, "{kind: linear, per_seq_ms: 10}", "{kind: continuous, max_num_seqs: 2}",
            "{policy: paged, capacity_tokens: 100, block_size: 1}"))),
        o);
    std::ostringstream text;
    write_vllm_bench_json(text, out.summary, tokens, {50});
    CHECK(nlohmann::json::parse(text.str())["request_rate"] == "inf");
  }
}
}  // namespace t_metrics_latency_stats_edges_test
