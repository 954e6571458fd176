// Contracts of the sizing answers (docs/sizing.md): the cheapest point and the Pareto front of
// any set of rows are the ones their definitions give, checked against a brute-force reading of
// the definitions on random rows full of ties (equal cost, equal p99 TTFT), unpriced and
// infeasible rows; and MLPerf's Server limits are mlperf.conf's, row for row.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>

#include "sizing/mlperf_server.h"
#include "sizing/sweep.h"
#include "sizing/sweep_output.h"
#include "sizing/sweep_run.h"
#include "tests/sizing/sweep_fixture.h"
#include "tests/support.h"

namespace t_sizing_sizing_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

bool priced(const PointResult& r) { return r.feasible && r.cost_per_hour_usd.has_value(); }

/// On the front: priced, and no other priced row is at least as cheap and at least as fast
/// while strictly better in one of the two (rows equal in both are all on it).
bool on_front(const std::vector<PointResult>& rows, const std::vector<size_t>& group, size_t i) {
  if (!priced(rows[i])) return false;
  const double c = *rows[i].cost_per_hour_usd, t = rows[i].ttft_p99_ms;
  for (size_t j : group) {
    if (j == i || !priced(rows[j])) continue;
    const double cj = *rows[j].cost_per_hour_usd, tj = rows[j].ttft_p99_ms;
    if (cj <= c && tj <= t && (cj < c || tj < t)) return false;
  }
  return true;
}

/// The cheapest priced row meeting the SLOs; equal costs go to the lower p99 TTFT, then to the
/// first row.
std::optional<size_t> cheapest_by_hand(const std::vector<PointResult>& rows,
                                       const std::vector<size_t>& group) {
  std::optional<size_t> best;
  for (size_t i : group) {
    const PointResult& r = rows[i];
    if (!priced(r) || !r.meets_slo) continue;
    if (!best) {
      best = i;
      continue;
    }
    const PointResult& b = rows[*best];
    if (*r.cost_per_hour_usd < *b.cost_per_hour_usd ||
        (*r.cost_per_hour_usd == *b.cost_per_hour_usd && r.ttft_p99_ms < b.ttft_p99_ms))
      best = i;
  }
  return best;
}

std::vector<PointResult> random_rows(std::mt19937& rng, size_t n) {
  // Few distinct values, so that equal costs and equal TTFTs are common.
  std::uniform_int_distribution<int> cost(1, 4), ttft(1, 4), kind(0, 9);
  std::vector<PointResult> rows(n);
  for (size_t i = 0; i < n; ++i) {
    PointResult& r = rows[i];
    r.point = i;
    const int k = kind(rng);
    r.feasible = k != 0;
    r.meets_slo = r.feasible && k > 2;
    if (k != 1) r.cost_per_hour_usd = 0.5 * cost(rng);
    r.ttft_p99_ms = 10.0 * ttft(rng);
    r.pareto = r.cheapest = (k % 2) == 0;  // stale marks, which mark_pareto must overwrite
  }
  return rows;
}

}  // namespace

TEST_CASE("sizing contract: the front and the cheapest point are their definitions, ties included",
          "[sizing][contract]") {
  // One deployment axis of 8 values, and the same with a scenario axis of 2 (fronts and
  // cheapest points per scenario point).
  const SweepSpec one = sweep_of("  scheduler.max_num_seqs: [1, 2, 3, 4, 5, 6, 7, 8]\n");
  const SweepSpec two = sweep_of(
      "  scheduler.max_num_seqs: [1, 2, 3, 4]\n  workload.transform.rate_scale: [0.5, 1]\n");
  std::mt19937 rng(35);
  for (const SweepSpec* spec : {&one, &two}) {
    REQUIRE(spec->point_count() == 8);
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<PointResult> rows = random_rows(rng, 8);
      mark_pareto(rows, *spec);
      const auto groups = rows_by_scenario(*spec, rows);
      REQUIRE(groups.size() == spec->scenario_count());
      std::set<size_t> front;
      for (const auto& g : groups) {
        const std::optional<size_t> best = cheapest_by_hand(rows, g);
        for (size_t i : g) {
          INFO("trial " << trial << ", row " << i << " of " << spec->scenario_count()
                        << " scenario(s)");
          CHECK(rows[i].pareto == on_front(rows, g, i));
          CHECK(rows[i].cheapest == (best == i));
          if (rows[i].pareto) front.insert(i);
        }
      }
      // Every tenth trial (the summary parses the base for each row it writes): the summary
      // holds the same front (by cost, then TTFT, within each scenario point) and the same
      // cheapest rows.
      if (trial % 10 != 0) continue;
      const auto j = nlohmann::json::parse(sweep_summary_json(*spec, rows));
      std::set<size_t> listed;
      double last_cost = -1, last_ttft = -1;
      for (const auto& r : j.at("pareto_front")) {
        listed.insert(r.at("point").get<size_t>());
        const double c = r.at("cost_per_hour_usd"), t = r.at("ttft_p99_ms");
        if (groups.size() == 1) CHECK((c > last_cost || (c == last_cost && t >= last_ttft)));
        last_cost = c;
        last_ttft = t;
      }
      CHECK(listed == front);
      const auto& per = j.at("cheapest_per_scenario");
      REQUIRE(per.size() == groups.size());
      for (size_t g = 0; g < groups.size(); ++g) {
        const std::optional<size_t> best = cheapest_by_hand(rows, groups[g]);
        if (best)
          CHECK(per[g].at("cheapest").at("point") == *best);
        else
          CHECK(per[g].at("cheapest").is_null());
      }
      if (groups.size() == 1) {
        const std::optional<size_t> best = cheapest(rows);
        CHECK(best == cheapest_by_hand(rows, groups[0]));
        CHECK(j.at("cheapest").is_null() == !best);
      }
    }
  }
}

TEST_CASE(
    "sizing contract: two rows equal in cost and TTFT are both on the front, the first cheapest",
    "[sizing][contract]") {
  const SweepSpec spec = sweep_of("  scheduler.max_num_seqs: [1, 2, 3]\n");
  std::vector<PointResult> rows(3);
  for (size_t i = 0; i < 3; ++i) {
    rows[i].point = i;
    rows[i].feasible = rows[i].meets_slo = true;
    rows[i].cost_per_hour_usd = 2.0;
    rows[i].ttft_p99_ms = 50;
  }
  rows[2].ttft_p99_ms = 50.5;  // as dear, slower: off the front
  mark_pareto(rows, spec);
  CHECK(rows[0].pareto);
  CHECK(rows[1].pareto);
  CHECK_FALSE(rows[2].pareto);
  CHECK(rows[0].cheapest);
  CHECK_FALSE(rows[1].cheapest);
  // A cheaper row exactly as fast pushes both off; one a hair slower leaves them on.
  rows[2].cost_per_hour_usd = 1.0;
  rows[2].ttft_p99_ms = 50;
  mark_pareto(rows, spec);
  CHECK_FALSE(rows[0].pareto);
  CHECK_FALSE(rows[1].pareto);
  CHECK(rows[2].pareto);
  CHECK(rows[2].cheapest);
  rows[2].ttft_p99_ms = 50.001;
  mark_pareto(rows, spec);
  CHECK(rows[0].pareto);
  CHECK(rows[1].pareto);
  CHECK(rows[2].pareto);
}

TEST_CASE("sizing contract: MLPerf's Server limits are mlperf.conf's, each benchmark once",
          "[sizing][contract]") {
  struct Want {
    const char* name;
    double ttft, tpot;
  };
  // mlcommons/inference loadgen/mlperf.conf: <benchmark>.Server.ttft_latency and tpot_latency.
  const std::vector<Want> want{
      {"deepseek-r1", 2000, 80},    {"deepseek-r1-interactive", 1500, 15},
      {"llama2-70b", 2000, 200},    {"llama2-70b-interactive", 450, 40},
      {"llama3_1-405b", 6000, 175}, {"llama3_1-405b-interactive", 4500, 80},
      {"llama3_1-8b", 2000, 100},   {"llama3_1-8b-interactive", 500, 30},
      {"mixtral-8x7b", 2000, 200}};
  const auto all = mlperf_server_benchmarks();
  REQUIRE(all.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(want[i].name);
    CHECK(all[i].benchmark == want[i].name);
    const MlperfServerRules& r = mlperf_server_rules(want[i].name);
    CHECK(r.ttft_limit_ms == want[i].ttft);
    CHECK(r.tpot_limit_ms == want[i].tpot);
    // The overrides carry the same limits, LoadGen's p99, and its query count.
    const std::vector<std::string> o = mlperf_server_overrides(r, 1.0);
    REQUIRE(o.size() == 3);
    CHECK(o[0] == fmt::format("slo={{ttft_ms: {}, tpot_ms: {}, percentile: 99}}", want[i].ttft,
                              want[i].tpot));
    CHECK(o[1] == fmt::format("benchmark={{kind: mlperf_server, ttft_limit_ms: {}, "
                              "tpot_limit_ms: {}}}",
                              want[i].ttft, want[i].tpot));
    CHECK(o[2] == "workload.synthetic.requests=600");
  }
  // LoadGen runs at least 600 s and 100 queries: at 1/6 per second both bounds meet.
  CHECK(loadgen_query_count(1.0 / 6) == 100);
  CHECK(loadgen_query_count(0.2) == 120);
  CHECK(loadgen_query_count(0.0) == 100);
  CHECK(loadgen_query_count(2.0) == 1200);
}

TEST_CASE(
    "sizing contract: a probe's offered rate is its arrivals' rate, 0 when they share an instant",
    "[sizing][contract]") {
  const auto base = [](const std::string& arrival, int requests) {
    return fmt::format(
        "workload: {{synthetic: {{requests: {}, arrival: {},\n"
        "  prompt_tokens: {{kind: fixed, value: 8}}, output_tokens: {{kind: fixed, value: 2}}}}}}\n"
        "step_time: {{kind: linear, base_ms: 1}}\n"
        "scheduler: {{kind: continuous, max_num_seqs: 8}}\n"
        "kv: {{policy: paged, block_size: 16, capacity_tokens: 4096}}\n",
        requests, arrival);
  };
  // 5 requests 10 ms apart: 4 gaps in 40 ms.
  Probe p = run_probe(base("{kind: fixed, rate_per_s: 100}", 5), "p.yaml", {});
  REQUIRE(p.built);
  CHECK(p.error == "");
  CHECK(p.offered_rate_per_s == Approx(100).epsilon(1e-12));
  CHECK(p.summary.finished == 5);
  // A burst (every request at one instant) and a lone request have no rate: 0, not infinity.
  p = run_probe(base("{kind: burst}", 5), "p.yaml", {});
  REQUIRE(p.built);
  CHECK(p.offered_rate_per_s == 0);
  p = run_probe(base("{kind: fixed, rate_per_s: 100}", 1), "p.yaml", {});
  REQUIRE(p.built);
  CHECK(p.offered_rate_per_s == 0);
  // A refused config is a probe that did not build, with the reason, never an exception.
  p = run_probe(base("{kind: fixed, rate_per_s: 100}", 5), "p.yaml", {"scheduler.max_num_seqs=0"});
  CHECK_FALSE(p.built);
  CHECK_THAT(p.error, Catch::Contains("max_num_seqs"));
}

}  // namespace t_sizing_sizing_contract_test
