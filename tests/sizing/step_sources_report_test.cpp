// The sweep report's `step times` line (sizing/sweep_output.cpp, sweep_report): when the points'
// step times come from more than one source, each source with the points it times, as
// points.csv's step_source; none when they all share one. Worked by hand.
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "sizing/sweep.h"
#include "sizing/sweep_output.h"
#include "sizing/sweep_run.h"
#include "tests/sizing/sweep_fixture.h"
#include "tests/support.h"

namespace t_sizing_step_sources_report_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::vector<PointResult> rows_of(const SweepSpec& spec) {
  std::vector<PointResult> rows(spec.point_count());
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].point = i;
    rows[i].feasible = true;
  }
  return rows;
}

/// The report's line (never its first) that starts with `head`, without its newline; empty when
/// there is none.
std::string line_starting(const std::string& report, const std::string& head) {
  const size_t at = report.find("\n" + head);
  if (at == std::string::npos) return "";
  return report.substr(at + 1, report.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("step sources report: each source with its points, in name order",
          "[sizing][sweep_output]") {
  // Points (kind, seats): 0 (linear, 8), 1 (linear, 16), 2 (roofline, 8), 3 (roofline, 16): the
  // step times come from the base's linear model for 0 and 1 and a roofline for 2 and 3.
  const SweepSpec spec =
      sweep_of("  step_time.kind: [linear, roofline]\n  scheduler.max_num_seqs: [8, 16]\n");
  REQUIRE(spec.point_count() == 4);
  CHECK(spec.step_source(0) == "linear");
  CHECK(spec.step_source(3) == "roofline");
  CHECK(line_starting(sweep_report(spec, rows_of(spec)), "step times") ==
        "step times linear (points 0, 1); roofline (points 2, 3)");
}

TEST_CASE("step sources report: one point a source is a point, singular",
          "[sizing][sweep_output]") {
  const SweepSpec spec = sweep_of("  step_time.kind: [roofline, linear]\n");
  REQUIRE(spec.point_count() == 2);
  CHECK(line_starting(sweep_report(spec, rows_of(spec)), "step times") ==
        "step times linear (point 1); roofline (point 0)");
}

TEST_CASE("step sources report: no line when every point has the same source",
          "[sizing][sweep_output]") {
  // Other step_time keys change the times, not where they come from.
  const SweepSpec spec =
      sweep_of("  step_time.base_ms: [8, 9]\n  scheduler.max_num_seqs: [8, 16]\n");
  REQUIRE(spec.point_count() == 4);
  const std::string report = sweep_report(spec, rows_of(spec));
  CHECK(report.find("step times") == std::string::npos);
  CHECK_THAT(report, Catch::StartsWith("points     4 (4 feasible, 0 meet the SLOs)\n"));
}

}  // namespace t_sizing_step_sources_report_test
