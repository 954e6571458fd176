// The sweep's worker pool (sizing/sweep_pool.h evaluate_points): every index evaluated once, its
// row in the index's slot, the progress callback counting 1 to n, whatever the thread count.
#include "sizing/sweep_pool.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <vector>

#include "tests/sizing/sweep_fixture.h"

namespace t_sizing_sweep_pool_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("sweep pool: each index's row in its slot, progress counted 1 to n, on any threads",
          "[sizing][size]") {
  const SweepSpec spec = sweep_of("  scheduler.max_num_seqs: [1, 2, 3, 4, 5]\n");
  const std::vector<size_t> indices{4, 1, 3};
  // 0 jobs runs on one thread; more jobs than points on one a point.
  for (const unsigned jobs : {0U, 1U, 2U, 8U}) {
    INFO(jobs << " jobs");
    std::mutex m;
    std::vector<size_t> done;
    const std::vector<PointResult> rows = evaluate_points(spec, indices, jobs, [&](size_t n) {
      const std::lock_guard<std::mutex> lock(m);
      done.push_back(n);
    });
    REQUIRE(rows.size() == 3);
    for (size_t k = 0; k < 3; ++k) {
      CHECK(rows[k].point == indices[k]);
      CHECK(rows[k].feasible);
      CHECK(rows[k].meets_slo);
      // The fixture's base names no chip: no price, so no cost and no tokens a dollar.
      CHECK_FALSE(rows[k].cost_per_hour_usd.has_value());
      CHECK_FALSE(rows[k].tokens_per_usd.has_value());
    }
    std::sort(done.begin(), done.end());
    CHECK(done == std::vector<size_t>{1, 2, 3});
  }
  CHECK(evaluate_points(spec, {}, 4, nullptr).empty());
  // Without a callback the rows are the same.
  const std::vector<PointResult> quiet = evaluate_points(spec, {2}, 1, nullptr);
  REQUIRE(quiet.size() == 1);
  CHECK(quiet[0].point == 2);
}

}  // namespace t_sizing_sweep_pool_test
