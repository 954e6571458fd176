// A sweep point's field list (PointResult's for_each_field, sizing/sweep_run.h) drives points.csv,
// the rows of the sweep's summary.json and what MPI ranks send rank 0.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sizing/sweep.h"
#include "sizing/sweep_output.h"
#include "sizing/sweep_run.h"
#include "tests/sizing/sweep_fixture.h"
#include "tests/support.h"

namespace t_sizing_point_fields_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

// Two points (max_num_seqs 8 and 16); nothing is run, the rows below are made by hand.
SweepSpec small_sweep() { return sweep_of("  scheduler.max_num_seqs: [8, 16]\n"); }

// Row 0 feasible and priced, with a distinct value in every field; row 1 infeasible.
std::vector<PointResult> rows() {
  PointResult a;
  a.point = 0;
  a.feasible = true;
  a.meets_slo = true;
  a.replicas = 2;
  a.accelerators = 4;
  a.cost_per_hour_usd = 12.5;
  a.requests_per_s = 3.25;
  a.output_tokens_per_s = 812.125;
  a.tokens_per_usd = 233.87;
  a.tokens_per_joule = 1.75;
  a.ttft_p50_ms = 10.5;
  a.ttft_p99_ms = 20.25;
  a.tpot_p50_ms = 5.125;
  a.tpot_p99_ms = 6.0625;
  a.e2e_p99_ms = 300.5;
  a.goodput_req_per_s = 3.0;
  a.slo_attainment = 0.875;
  PointResult b;
  b.point = 1;
  b.reason = "config: x, y";
  std::vector<PointResult> r{a, b};
  mark_pareto(r, SweepSpec{});
  return r;
}

std::vector<std::string> listed(unsigned output, bool lead) {
  std::vector<std::string> names;
  const PointResult none;
  for_each_field(none, [&](const Field& f, const auto&) {
    if ((f.outputs & output) && static_cast<bool>(f.outputs & k_lead) == lead)
      names.emplace_back(f.name);
  });
  return names;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

TEST_CASE("point fields: points.csv's header is the field list around the axis columns",
          "[sizing][summary_fields]") {
  const SweepSpec spec = small_sweep();
  const std::string csv = points_csv(spec, rows());
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK(header == join(listed(k_csv, true)) + ",label,scheduler.max_num_seqs,step_source," +
                      join(listed(k_csv, false)));
  CHECK(header ==
        "point,label,scheduler.max_num_seqs,step_source,feasible,reason,meets_slo,pareto,cheapest,"
        "replicas,accelerators,cost_per_hour_usd,requests_per_s,output_tokens_per_s,tokens_per_usd,"
        "tokens_per_joule,ttft_p50_ms,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,e2e_p99_ms,goodput_req_"
        "per_s,"
        "slo_attainment,rejected,shed,timed_out,cancelled");
  // The infeasible row: quoted reason, empty measurements.
  CHECK_THAT(csv, Catch::EndsWith(",false,\"config: x, y\",false,false,false,,,,,,,,,,,,,,,,,,\n"));
}

TEST_CASE("point fields: summary.json's rows have the listed keys, in points.csv's order",
          "[sizing][summary_fields]") {
  const SweepSpec spec = small_sweep();
  const auto j = nlohmann::ordered_json::parse(sweep_summary_json(spec, rows()));
  const auto& row = j.at("cheapest");
  std::vector<std::string> keys;
  for (const auto& [k, v] : row.items()) keys.push_back(k);
  std::vector<std::string> want = listed(k_json, true);
  for (const char* k : {"label", "scheduler.max_num_seqs", "step_source"}) want.emplace_back(k);
  for (const auto& k : listed(k_json, false)) want.push_back(k);
  CHECK(keys == want);
  CHECK(row.at("cost_per_hour_usd") == 12.5);
  CHECK(row.at("pareto") == true);
}

TEST_CASE("point fields: a row survives the MPI transfer field for field",
          "[sizing][summary_fields]") {
  for (const PointResult& r : rows()) {
    const PointResult back = point_from_json(nlohmann::json::parse(point_to_json(r).dump()));
    for_each_field(r, [&](const Field& f, const auto& v) {
      if (!(f.outputs & k_wire)) return;
      INFO(f.name);
      for_each_field(back, [&](const Field& g, const auto& w) {
        if constexpr (std::is_same_v<decltype(v), decltype(w)>)
          if (g.name == f.name) CHECK(v == w);
      });
    });
    CHECK(point_to_json(r).size() == listed(k_wire, true).size() + listed(k_wire, false).size());
  }
}

}  // namespace t_sizing_point_fields_test
