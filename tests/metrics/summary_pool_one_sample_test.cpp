// A pool line of the printed summary (metrics/summary_output.cpp) for a pool with exactly one
// TTFT and one TPOT sample: each mean is printed as soon as there is one request behind it, and
// the TPOT mean follows the TTFT mean after a comma (after a semicolon when it stands alone).
#include <catch2/catch.hpp>
#include <string>

#include "metrics/output.h"

namespace t_metrics_summary_pool_one_sample_test {

using namespace servesim;

namespace {

PoolSummary pool(const std::string& name, int64_t ttft_count, int64_t tpot_count) {
  PoolSummary p;
  p.name = name;
  p.role = "mixed";
  p.replicas = 1;
  p.accelerators = 1;
  p.busy_share = 0.125;
  p.routed = 1;
  p.finished = 1;
  p.ttft_s.count = ttft_count;
  p.ttft_mean_s = 0.0205;
  p.tpot_s.count = tpot_count;
  p.tpot_mean_s = 0.0031;
  return p;
}

}  // namespace

TEST_CASE("summary lines: a pool's means from a single request", "[metrics]") {
  Summary s;
  s.requests = 2;
  s.finished = 2;
  s.replicas.resize(2);
  s.pools = {pool("both", 1, 1), pool("ttft", 1, 0), pool("tpot", 0, 1)};
  const std::string t = summary_table(s);
  INFO(t);
  // 20.5 ms and 3.1 ms, the means of one sample each.
  CHECK_THAT(t, Catch::Contains("pool       both (mixed, 1 replicas, 1 accelerators): busy 12.5%, "
                                "routed 1, finished 1; TTFT mean 20.5 ms, TPOT mean 3.10 ms\n"));
  CHECK_THAT(t, Catch::Contains("pool       ttft (mixed, 1 replicas, 1 accelerators): busy 12.5%, "
                                "routed 1, finished 1; TTFT mean 20.5 ms\n"));
  CHECK_THAT(t, Catch::Contains("pool       tpot (mixed, 1 replicas, 1 accelerators): busy 12.5%, "
                                "routed 1, finished 1; TPOT mean 3.10 ms\n"));
}

}  // namespace t_metrics_summary_pool_one_sample_test
