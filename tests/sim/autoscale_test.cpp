// Autoscaling (sim/autoscaler.h): a scale-up goes live exactly its provisioning delay after the
// decision; the paid replicas stay within the bounds and their integral is the replica-hours
// (and, priced, the cost); routers send requests only to live replicas; bad sections refused.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>

#include "metrics/run_scenario.h"
#include "models/catalog.h"
#include "tests/support.h"

namespace t_sim_autoscale_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// 60 requests, one every 0.5 s, each 1 prompt + 99 output tokens on a 10 ms step and one seat
/// per replica: a request takes 1 s, so one replica falls behind and two keep up.
std::string scenario(const std::string& autoscale, const std::string& replicas = "1") {
  std::string rows;
  for (int i = 0; i < 60; ++i) rows += std::to_string(0.5 * i) + ",1,100\n";
  return trace_scenario(rows, "{kind: linear, base_ms: 10}", "{kind: continuous, max_num_seqs: 1}",
                        "{policy: paged, capacity_tokens: 10000, block_size: 1}") +
         "cluster: {replicas: " + replicas +
         ", router: {kind: least_outstanding}, autoscale: " + autoscale + "}\n";
}

const std::string k_queue =
    "{signal: queue, target: 1, window_s: 2, min: 1, max: 3, provision_s: 3, cooldown_s: 0}";

struct Run {
  std::vector<Request> requests;
  AutoscaleStats stats;
};

Run run(const std::string& yaml) {
  CheckedRun r = run_checked(yaml);
  REQUIRE(r.stats.autoscale.has_value());
  return {std::move(r.requests), *r.stats.autoscale};
}

}  // namespace

TEST_CASE("autoscale: a scale-up goes live exactly provision_s after its decision",
          "[sim][autoscale]") {
  const Run r = run(scenario(k_queue));
  const AutoscaleRow* up = nullptr;
  for (const AutoscaleRow& row : r.stats.timeline)
    if (std::string(row.event) == "up") {
      up = &row;
      break;
    }
  REQUIRE(up != nullptr);
  // Decisions come every window_s (2 s): the first that sees a queue above target.
  CHECK(up->t.count_ns() % ms(2000) == 0);
  CHECK(up->replica == 1);
  const AutoscaleRow* live = nullptr;
  for (const AutoscaleRow& row : r.stats.timeline)
    if (std::string(row.event) == "live" && row.replica == up->replica) {
      live = &row;
      break;
    }
  REQUIRE(live != nullptr);
  CHECK(live->t.count_ns() == up->t.count_ns() + ms(3000));
  CHECK(r.stats.scale_ups >= 1);
  for (const Request& q : r.requests) CHECK(q.state == RequestState::Released);
}

TEST_CASE("autoscale: routers pick only live replicas, and drained ones finish their work",
          "[sim][autoscale]") {
  const Run r = run(scenario(k_queue));
  // Each replica's live stretches, from the timeline.
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> live;
  std::map<uint32_t, int64_t> since;
  since[0] = 0;
  for (const AutoscaleRow& row : r.stats.timeline) {
    const std::string e = row.event;
    if (e == "live") since[row.replica] = row.t.count_ns();
    if (e == "drain") {
      live[row.replica].push_back({since[row.replica], row.t.count_ns()});
      since.erase(row.replica);
    }
  }
  for (const auto& [rep, t] : since) live[rep].push_back({t, INT64_MAX});
  CHECK(r.stats.scale_downs >= 1);
  for (const Request& q : r.requests) {
    CHECK(q.state == RequestState::Released);  // a drained replica's requests too
    bool ok = false;
    for (const auto& [from, to] : live[q.replica])
      ok = ok || (q.spec.arrival.count_ns() >= from && q.spec.arrival.count_ns() < to);
    INFO("request " << q.spec.id << " on replica " << q.replica);
    CHECK(ok);
  }
}

TEST_CASE("autoscale: paid replicas stay within the bounds and integrate to the replica-hours",
          "[sim][autoscale]") {
  for (const char* signal : {"queue", "utilisation", "kv"}) {
    const Run r = run(scenario(std::string("{signal: ") + signal +
                                   ", target: 0.5, window_s: 1, min: 2, max: 4, provision_s: 1.5, "
                                   "cooldown_s: 2}",
                               "2"));
    double integral = 0;
    for (size_t i = 0; i < r.stats.timeline.size(); ++i) {
      const AutoscaleRow& row = r.stats.timeline[i];
      const uint32_t paid = row.live + row.provisioning + row.draining;
      CHECK(paid <= 4);
      CHECK(row.live >= 2);
      if (i + 1 < r.stats.timeline.size())
        integral += paid * (r.stats.timeline[i + 1].t - row.t).seconds();
    }
    INFO(signal);
    CHECK(r.stats.max_held <= 4);
    CHECK(r.stats.min_live >= 2);
    CHECK(integral == Approx(r.stats.replica_seconds).epsilon(1e-12));
    double held = 0;
    for (double h : r.stats.held_s) held += h;
    CHECK(held == Approx(r.stats.replica_seconds).epsilon(1e-9));
  }
}

TEST_CASE("autoscale: the cost is the replica-hours at the catalogue's price", "[sim][autoscale]") {
  const std::string yaml =
      "workload: {synthetic: {requests: 300, arrival: {kind: poisson, rate_per_s: 20}, "
      "prompt_tokens: {kind: fixed, value: 512}, output_tokens: {kind: fixed, value: 128}}}\n"
      "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, capacity_tokens: 100000, block_size: 16}\n"
      "cluster: {replicas: 1, router: {kind: least_outstanding}, autoscale: {signal: "
      "utilisation, target: 0.5, window_s: 1, max: 3, provision_s: 2, cooldown_s: 1}}\n";
  const RunOutput out = run_scenario(doc_of(yaml));
  REQUIRE(out.summary.autoscale.has_value());
  const AutoscaleSummary& a = *out.summary.autoscale;
  const double price = load_hardware("h100-sxm", ".").price(k_default_price_tier)->usd_per_hour;
  REQUIRE(a.usd_per_replica_hour.has_value());
  CHECK(*a.usd_per_replica_hour == Approx(price));
  REQUIRE(a.usd.has_value());
  CHECK(*a.usd == Approx(a.replica_hours * price));
  CHECK(a.accelerator_hours == Approx(a.replica_hours));
  CHECK(a.mean_replicas == Approx(a.replica_hours * 3600 / a.horizon_s));
  CHECK(a.scale_ups >= 1);
  CHECK(out.autoscale_csv.rfind("time_s,event,replica,signal,live,provisioning,draining,paid\n",
                                0) == 0);
  CHECK(out.summary_json.find("\"autoscale\"") != std::string::npos);
}

TEST_CASE("autoscale: decide scales to the target and holds within cooldown and bounds",
          "[sim][autoscale]") {
  auto spec = std::make_shared<AutoscaleSpec>();
  spec->signal = ScaleSignal::Utilisation;
  spec->target = 0.5;
  spec->min = 1;
  spec->max = 4;
  spec->initial = 2;
  spec->cooldown = Time::from_seconds(10);
  Autoscaler a(spec, 4);
  CHECK(a.decide(0.9, Time::from_seconds(1)) == 2);   // ceil(2 x 0.9 / 0.5) = 4
  CHECK(a.decide(2.0, Time::from_seconds(1)) == 2);   // at most max
  CHECK(a.decide(0.5, Time::from_seconds(1)) == 0);   // on target
  CHECK(a.decide(0.1, Time::from_seconds(1)) == -1);  // ceil(0.4) = 1 = min
  CHECK(a.decide(std::nan(""), Time::from_seconds(1)) == 0);
  a.set_phase(2, ReplicaPhase::Provisioning, Time::from_seconds(1));
  CHECK(a.decide(0.9, Time::from_seconds(5)) == 0);   // cooldown
  CHECK(a.decide(0.9, Time::from_seconds(11)) == 1);  // 4 wanted, 3 paid or coming
  CHECK(a.decide(0.1, Time::from_seconds(11)) == 0);  // not while one is provisioning
}

TEST_CASE("autoscale: bad sections are refused with the key named", "[sim][autoscale]") {
  CHECK_THAT(input_error_of(scenario("{signal: queue, target: 1, min: 3, max: 2}", "2")),
             Catch::Contains("cluster.autoscale.max") && Catch::Contains("min"));
  CHECK_THAT(input_error_of(scenario("{signal: queue, target: 1, max: 2}", "3")),
             Catch::Contains("cluster.replicas") && Catch::Contains("autoscale.max"));
  CHECK_THAT(input_error_of(scenario("{signal: load, target: 1, max: 2}")),
             Catch::Contains("cluster.autoscale.signal") && Catch::Contains("utilisation"));
  CHECK_THAT(input_error_of(scenario("{signal: kv, target: 1.5, max: 2}")),
             Catch::Contains("cluster.autoscale.target"));
  CHECK_THAT(input_error_of(scenario("{signal: slo, target: 0.9, max: 2}")),
             Catch::Contains("cluster.autoscale.signal") && Catch::Contains("slo"));
  CHECK_THAT(input_error_of(scenario("{signal: queue, target: 1, max: 2, cooldown_s: -1}")),
             Catch::Contains("cooldown_s"));
}

TEST_CASE("autoscale: pools are refused and the parallel engine falls back", "[sim][autoscale]") {
  const std::string base = trace_scenario("0,1,10\n", "{kind: linear, base_ms: 10}",
                                          "{kind: continuous, max_num_seqs: 1}",
                                          "{policy: paged, capacity_tokens: 10000, block_size: 1}");
  CHECK_THAT(
      input_error_of(base + "cluster: {pools: [{name: a, replicas: 2}], router: {kind: "
                            "round_robin}, autoscale: {signal: queue, target: 1, max: 2}}\n"),
      Catch::Contains("cluster.autoscale") && Catch::Contains("pools"));
  RunOptions o;
  o.threads = 2;
  const std::string yaml =
      scenario("{signal: queue, target: 1, window_s: 2, max: 3, provision_s: 3, cooldown_s: 0}") +
      "";
  std::string refreshed = yaml;
  refreshed.replace(refreshed.find("least_outstanding}"), 18,
                    "least_outstanding, "
                    "load_refresh_ms: 100}");
  const RunOutput out = run_scenario(doc_of(refreshed), o);
  CHECK_THAT(out.engine_notice, Catch::Contains("cluster.autoscale"));
  CHECK(out.summary.autoscale.has_value());
}

TEST_CASE("autoscale: the slo signal scales up on missed targets", "[sim][autoscale]") {
  const Run r = run(scenario("{signal: slo, target: 0.9, window_s: 2, max: 3, provision_s: 1, "
                             "cooldown_s: 0}") +
                    "slo: {ttft_ms: 200}\n");
  CHECK(r.stats.scale_ups >= 1);
  for (const Request& q : r.requests) CHECK(q.state == RequestState::Released);
}

}  // namespace t_sim_autoscale_test
