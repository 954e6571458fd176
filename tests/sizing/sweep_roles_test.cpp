// Axis roles (docs/sizing.md#axis-roles): traffic axes are scenario points, and the cheapest
// deployment and the Pareto front are chosen within each, never across traffic levels.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "sizing/sweep.h"
#include "sizing/sweep_output.h"
#include "sizing/sweep_run.h"
#include "tests/sizing/sweep_fixture.h"
#include "tests/support.h"

namespace t_sizing_sweep_roles_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::string& axes) {
  try {
    (void)sweep_of(axes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

PointResult row(size_t point, double cost, double ttft, bool meets) {
  PointResult r;
  r.point = point;
  r.feasible = true;
  r.meets_slo = meets;
  r.cost_per_hour_usd = cost;
  r.ttft_p99_ms = ttft;
  return r;
}

}  // namespace

TEST_CASE("sweep roles: workload, slo, seed and rate keys are scenario axes, the rest deployment",
          "[sizing][roles]") {
  for (const char* k :
       {"workload", "workload.transform.rate_scale", "workload.trace.path", "slo.ttft_ms", "seed",
        "workload.synthetic.arrival.rate_per_s", "cluster.target_rate_per_s", "rate_scale",
        "abandonment.timeout_s", "abandonment.cancel.fraction"})
    CHECK(inferred_role(k) == AxisRole::Scenario);
  for (const char* k :
       {"accelerator", "replicas", "tensor_parallel", "model", "weight_dtype",
        "scheduler.max_num_seqs", "scheduler", "kv.block_size", "step_time.data_parallel",
        "cluster.router.kind", "admission.queue_cap", "admission.rate_limit.rate_per_s"})
    CHECK(inferred_role(k) == AxisRole::Deployment);
}

TEST_CASE("sweep roles: an axis given as a map names its role, checked like any key",
          "[sizing][roles]") {
  const SweepSpec spec = sweep_of(
      "  scheduler.max_num_seqs: {values: [8, 16], role: scenario}\n"
      "  workload.transform.rate_scale: {values: [0.5, 1], role: deployment}\n"
      "  kv.block_size: [16, 32]\n");
  REQUIRE(spec.axes.size() == 3);
  CHECK(spec.axes[0].role == AxisRole::Scenario);
  CHECK(spec.axes[0].role_given);
  CHECK(spec.axes[1].role == AxisRole::Deployment);
  CHECK(spec.axes[2].role == AxisRole::Deployment);
  CHECK_FALSE(spec.axes[2].role_given);
  CHECK(spec.axes[0].values == std::vector<std::string>{"8", "16"});
  CHECK(spec.scenario_count() == 2);
  CHECK(spec.scenario_of(3) == 0);  // max_num_seqs 8, rate 1, block 32
  CHECK(spec.scenario_of(4) == 1);
  CHECK(spec.scenario_label(4) == "scheduler.max_num_seqs=16");
  CHECK(spec.deployment_label(4) == "workload.transform.rate_scale=0.5;kv.block_size=16");

  CHECK_THAT(error_of("  scheduler.max_num_seqs: {values: [8], role: traffic}\n"),
             Catch::Contains("axes.scheduler.max_num_seqs.role") && Catch::Contains("s.yaml:4:") &&
                 Catch::Contains("deployment, scenario"));
  CHECK_THAT(error_of("  scheduler.max_num_seqs: {value: [8]}\n"),
             Catch::Contains("axes.scheduler.max_num_seqs.value") &&
                 Catch::Contains("did you mean values"));
  CHECK_THAT(error_of("  scheduler.max_num_seqs: {role: scenario}\n"),
             Catch::Contains("axes.scheduler.max_num_seqs") && Catch::Contains("needs `values`"));
  CHECK_THAT(error_of("  scheduler.max_num_seqs: {values: [], role: scenario}\n"),
             Catch::Contains("non-empty list"));
}

TEST_CASE("sweep roles: the cheapest deployment and the front are chosen per scenario point",
          "[sizing][roles]") {
  // Points: (seats 8, rate 0.25), (8, 1), (16, 0.25), (16, 1). At a quarter of the traffic 8
  // seats meet the SLOs for $1/h; at the full traffic only 16 seats ($2/h) do. Across the whole
  // sweep point 0 would be "cheapest": it answers a lighter traffic, not this one.
  const SweepSpec spec =
      sweep_of("  scheduler.max_num_seqs: [8, 16]\n  workload.transform.rate_scale: [0.25, 1]\n");
  REQUIRE(spec.axes[1].role == AxisRole::Scenario);
  std::vector<PointResult> rows{row(0, 1, 100, true), row(1, 1, 900, false), row(2, 2, 90, true),
                                row(3, 2, 300, true)};
  mark_pareto(rows, spec);
  CHECK(rows[0].cheapest);
  CHECK_FALSE(rows[1].cheapest);
  CHECK_FALSE(rows[2].cheapest);
  CHECK(rows[3].cheapest);
  // Each scenario's front: at rate 1 the $1 point is on it (cheapest there), at 0.25 point 2 is
  // (faster than point 0), whatever the other scenario's points do.
  CHECK(rows[0].pareto);
  CHECK(rows[1].pareto);
  CHECK(rows[2].pareto);
  CHECK(rows[3].pareto);

  const auto j = nlohmann::ordered_json::parse(sweep_summary_json(spec, rows));
  CHECK(j.at("cheapest").is_null());
  CHECK(j.at("scenarios") == 2);
  CHECK(j.at("axes").at(1).at("role") == "scenario");
  const auto& per = j.at("cheapest_per_scenario");
  REQUIRE(per.size() == 2);
  CHECK(per[0].at("label") == "workload.transform.rate_scale=0.25");
  CHECK(per[0].at("scenario").at("workload.transform.rate_scale") == "0.25");
  CHECK(per[0].at("cheapest").at("point") == 0);
  CHECK(per[1].at("cheapest").at("point") == 3);
  CHECK(per[1].at("deployment") == "scheduler.max_num_seqs=16");

  const std::string csv = points_csv(spec, rows);
  CHECK(csv.substr(0, csv.find('\n')).find(",pareto,cheapest,") != std::string::npos);

  const std::string report = sweep_report(spec, rows);
  CHECK_THAT(report, Catch::Contains("cheapest deployment meeting the SLOs, per scenario "
                                     "(workload.transform.rate_scale)"));
  CHECK_THAT(report, Catch::Contains("workload.transform.rate_scale=1\n    3       2.00"));
  CHECK_THAT(report, Catch::Contains("scheduler.max_num_seqs=16\n"));

  // No point of a scenario meets the SLOs: it says so, and the other keeps its answer.
  rows[3].meets_slo = false;
  mark_pareto(rows, spec);
  CHECK_FALSE(rows[3].cheapest);
  CHECK_THAT(sweep_report(spec, rows),
             Catch::Contains("workload.transform.rate_scale=1\n    -  no priced deployment"));
  CHECK(
      nlohmann::json::parse(sweep_summary_json(spec, rows))["cheapest_per_scenario"][1]["cheapest"]
          .is_null());
}

TEST_CASE("sweep roles: a sweep without scenario axes keeps one cheapest point",
          "[sizing][roles]") {
  const SweepSpec spec = sweep_of("  scheduler.max_num_seqs: [8, 16]\n");
  std::vector<PointResult> rows{row(0, 1, 100, true), row(1, 2, 90, true)};
  mark_pareto(rows, spec);
  const auto j = nlohmann::ordered_json::parse(sweep_summary_json(spec, rows));
  CHECK(j.at("cheapest").at("point") == 0);
  CHECK(j.at("cheapest_per_scenario").size() == 1);
  CHECK(j.at("cheapest_per_scenario")[0].at("label") == "");
  CHECK_THAT(sweep_report(spec, rows), Catch::Contains("\ncheapest meeting the SLOs\n"));
}

}  // namespace t_sizing_sweep_roles_test
