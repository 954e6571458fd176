// The sizing sweep's writers (sizing/sweep_output.h) at their edges, on rows made by hand: the
// --percentiles columns of a row that has none, a scenario point without rows, and the Pareto
// front and the cheapest point at exact ties of cost and of p99 TTFT.
#include <catch2/catch.hpp>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sizing/sweep.h"
#include "sizing/sweep_output.h"
#include "sizing/sweep_run.h"
#include "tests/sizing/sweep_fixture.h"
#include "tests/support.h"

namespace t_sizing_sweep_output_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

PointResult priced_row(size_t point, std::optional<double> cost, double ttft, bool meets = true) {
  PointResult r;
  r.point = point;
  r.feasible = true;
  r.meets_slo = meets;
  r.cost_per_hour_usd = cost;
  r.ttft_p99_ms = ttft;
  return r;
}

std::string line_of(const std::string& text, size_t n) {
  size_t begin = 0;
  for (size_t i = 0; i < n; ++i) begin = text.find('\n', begin) + 1;
  return text.substr(begin, text.find('\n', begin) - begin);
}

std::string tail_after(const std::string& line, size_t commas_from_end) {
  size_t at = line.size();
  for (size_t i = 0; i < commas_from_end; ++i) at = line.rfind(',', at - 1);
  return line.substr(at);
}

}  // namespace

TEST_CASE("sweep output: each percentile column is filled from the row or left empty",
          "[sizing][sweep_output]") {
  SweepSpec spec = sweep_of("  scheduler.max_num_seqs: [8, 16, 32]\n");
  spec.percentiles = {50, 99.5};
  PointResult full = priced_row(0, 1, 10);
  full.latency_ms = {1, 2, 3, 4, 5, 6, 7, 8.25};
  PointResult none;  // infeasible: no latencies at all
  none.point = 1;
  none.reason = "kv";
  PointResult part = priced_row(2, 2, 20);
  part.latency_ms = {1.5, 2.5, 3.5};
  const std::vector<PointResult> rows{full, none, part};
  const std::string csv = points_csv(spec, rows);
  CHECK_THAT(line_of(csv, 0),
             Catch::EndsWith(",cancelled,p50_ttft_ms,p99.5_ttft_ms,p50_tpot_ms,p99.5_tpot_ms,"
                             "p50_itl_ms,p99.5_itl_ms,p50_e2e_ms,p99.5_e2e_ms"));
  CHECK(tail_after(line_of(csv, 1), 9) == ",0,1,2,3,4,5,6,7,8.25");
  CHECK(tail_after(line_of(csv, 2), 9) == ",,,,,,,,,");
  CHECK(tail_after(line_of(csv, 3), 9) == ",0,1.5,2.5,3.5,,,,,");

  // summary.json: the cheapest row (point 0) carries its eight values; point 2's front row its
  // three and nulls for the rest.
  std::vector<PointResult> marked = rows;
  mark_pareto(marked, spec);
  const auto j = nlohmann::json::parse(sweep_summary_json(spec, marked));
  const auto& best = j.at("cheapest");
  CHECK(best.at("p50_ttft_ms") == 1);
  CHECK(best.at("p99.5_e2e_ms") == 8.25);
  // Point 2 is dearer and slower than point 0: off the front, so summarised through the rows.
  CHECK(j.at("pareto_front").size() == 1);
  marked[2].ttft_p99_ms = 5;
  mark_pareto(marked, spec);
  const auto k = nlohmann::json::parse(sweep_summary_json(spec, marked));
  REQUIRE(k.at("pareto_front").size() == 2);
  const auto& p2 = k.at("pareto_front")[1];
  CHECK(p2.at("point") == 2);
  // Metric-major, as the columns: its three values are TTFT p50, TTFT p99.5 and TPOT p50.
  CHECK(p2.at("p50_ttft_ms") == 1.5);
  CHECK(p2.at("p50_tpot_ms") == 3.5);
  CHECK(p2.at("p99.5_tpot_ms").is_null());
  CHECK(p2.at("p99.5_e2e_ms").is_null());
}

TEST_CASE("sweep output: the front and the cheapest point at exact ties",
          "[sizing][sweep_output]") {
  const SweepSpec spec = sweep_of("  scheduler.max_num_seqs: [1, 2, 3, 4, 5, 6, 7, 8]\n");
  // Cost ties: points 0 and 1 share the cheapest cost and the lowest TTFT (both on the front),
  // point 2 shares the cost with a higher TTFT (off). At $2 point 3 only equals the TTFT of a
  // cheaper point (off: the front needs strictly faster), point 4 is faster (on). Point 5 is
  // dearer and slower (off); point 6 is unpriced and point 7 infeasible (never on it).
  std::vector<PointResult> rows{priced_row(0, 1, 100, false),   priced_row(1, 1, 100),
                                priced_row(2, 1, 120),          priced_row(3, 2, 100),
                                priced_row(4, 2, 90),           priced_row(5, 3, 95),
                                priced_row(6, std::nullopt, 1), priced_row(7, 0.5, 1)};
  rows[7].feasible = false;
  rows[7].meets_slo = false;
  mark_pareto(rows, spec);
  std::vector<size_t> front, cheapest_rows;
  for (const PointResult& r : rows) {
    if (r.pareto) front.push_back(r.point);
    if (r.cheapest) cheapest_rows.push_back(r.point);
  }
  CHECK(front == std::vector<size_t>{0, 1, 4});
  // Point 0 misses the SLOs: point 1, its exact tie, is the cheapest meeting them.
  CHECK(cheapest_rows == std::vector<size_t>{1});
  CHECK(cheapest(rows) == std::optional<size_t>(1));
  // When both meet them, the first of the tie wins, and a tie on cost goes to the lower TTFT.
  rows[0].meets_slo = true;
  CHECK(cheapest(rows) == std::optional<size_t>(0));
  rows[0].ttft_p99_ms = 101;
  CHECK(cheapest(rows) == std::optional<size_t>(1));
  rows[1].meets_slo = false;
  CHECK(cheapest(rows) == std::optional<size_t>(0));
  rows[0].ttft_p99_ms = 121;
  CHECK(cheapest(rows) == std::optional<size_t>(2));
  // Marking again drops the old marks: point 0 (now 121 ms) leaves the front, point 1 (100 ms)
  // alone has the $1 group's lowest TTFT.
  mark_pareto(rows, spec);
  front.clear();
  for (const PointResult& r : rows)
    if (r.pareto) front.push_back(r.point);
  CHECK(front == std::vector<size_t>{1, 4});

  // The report and summary.json list the front by cost, then TTFT, then point.
  const std::string report = sweep_report(spec, rows);
  CHECK_THAT(report, Catch::Contains("Pareto front (cost per hour vs p99 TTFT), 2 points\n"));
  const auto j = nlohmann::json::parse(sweep_summary_json(spec, rows));
  REQUIRE(j.at("pareto_front").size() == 2);
  CHECK(j.at("pareto_front")[0].at("point") == 1);
  CHECK(j.at("pareto_front")[1].at("point") == 4);
  CHECK(j.at("cheapest").at("point") == 2);
  CHECK(j.at("feasible") == 7);
  CHECK(j.at("meeting_slo") == 6);
}

TEST_CASE("sweep output: a scenario point with no rows is left out of the report and summary",
          "[sizing][sweep_output]") {
  // Points (seats, rate): 0 (8, 0.25), 1 (8, 1), 2 (16, 0.25), 3 (16, 1); only the rate-0.25
  // scenario's rows are given (a sweep stopped early), so the rate-1 group is empty.
  const SweepSpec spec =
      sweep_of("  scheduler.max_num_seqs: [8, 16]\n  workload.transform.rate_scale: [0.25, 1]\n");
  std::vector<PointResult> rows{priced_row(0, 1, 100), priced_row(2, 2, 90)};
  mark_pareto(rows, spec);
  CHECK(rows[0].cheapest);
  CHECK(rows[0].pareto);
  CHECK(rows[1].pareto);
  const std::string report = sweep_report(spec, rows);
  CHECK(report.find("rate_scale=1\n") == std::string::npos);
  CHECK_THAT(report, Catch::Contains("per scenario, 2 points\n"));
  const auto j = nlohmann::json::parse(sweep_summary_json(spec, rows));
  REQUIRE(j.at("cheapest_per_scenario").size() == 1);
  CHECK(j.at("cheapest_per_scenario")[0].at("label") == "workload.transform.rate_scale=0.25");
  CHECK(j.at("pareto_front").size() == 2);
  CHECK(j.at("cheapest").is_null());
}

}  // namespace t_sizing_sweep_output_edges_test
