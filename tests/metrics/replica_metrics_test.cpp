// Per-replica and per-pool latency percentiles, SLO attainment and preemption counts
// (sim/metrics.cpp, MetricsRecorder::track_replicas; docs/metrics.md#per-replica-and-per-pool).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_replica_metrics_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string trace(const std::string& rows) {
  return "workload: {trace: {path: " +
         write_temp("t.csv", "arrival_s,prompt_tokens,output_tokens\n" + rows) + "}}\n";
}

// A step takes 8 ms + 2 ms a sequence: 10 ms alone, 12 ms for two.
const std::string k_engine =
    "step_time: {kind: linear, base_ms: 8, per_seq_ms: 2}\n"
    "scheduler: {kind: continuous, max_num_seqs: 8}\n"
    "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n";

// Round robin over two replicas: r0, r2, r4 on replica 0; r1, r3, r5 on replica 1.
const std::string k_two_replicas =
    trace("0,32,5\n0.001,32,2\n0.015,32,3\n0.016,32,4\n0.100,32,1\n0.101,32,3\n") + k_engine +
    "cluster: {replicas: 2, router: {kind: round_robin}}\n"
    "slo: {ttft_ms: 12, tpot_ms: 11}\n";

constexpr double k_eps = 1e-12;

}  // namespace

TEST_CASE("replica metrics: two replicas' percentiles and attainment, worked by hand",
          "[metrics][cluster][replica_metrics]") {
  // Replica 0. t=0 r0 prefills alone, 0-10 ms (first token at 10). r2 arrives at 15 during
  // r0's decode 10-20. 20-32: r0 decodes, r2 prefills (two sequences: 12 ms; r2's first token at
  // 32, TTFT 17). 32-44, 44-56: both decode; r0 (5 tokens) and r2 (3) finish at 56.
  //   r0: TTFT 10, TPOT (56 - 10) / 4 = 11.5, E2E 56.  r2: TTFT 17, TPOT (56 - 32) / 2 = 12,
  //   E2E 41.  r4 (t=100, one token) alone 100-110: TTFT 10, no TPOT, E2E 10.
  // Replica 1, every step alone (10 ms). r1 (t=1): 1-11, 11-21: TTFT 10, TPOT 10, E2E 20.
  //   r3 (t=16) waits for the step 11-21, then 21-31 (TTFT 15) and 3 decodes to 61: TPOT 10,
  //   E2E 45.  r5 (t=101): 101-111, 111-121, 121-131: TTFT 10, TPOT 10, E2E 30.
  const RunOutput out = run_scenario(doc_of(k_two_replicas));
  const Summary& s = out.summary;
  REQUIRE(s.replicas.size() == 2);
  const ReplicaSummary& a = s.replicas[0];
  const ReplicaSummary& b = s.replicas[1];
  CHECK(a.routed == 3);
  CHECK(a.requests == 3);
  CHECK(a.finished == 3);
  // Sorted TTFTs 10, 10, 17 ms: p50 the middle one; p90 at position 1.8 and p99 at 1.98,
  // between 10 and 17.
  CHECK(a.ttft_s.count == 3);
  CHECK(a.ttft_s.p50 == Approx(0.010).epsilon(k_eps));
  CHECK(a.ttft_s.p90 == Approx(0.010 + 0.8 * 0.007).epsilon(k_eps));
  CHECK(a.ttft_s.p99 == Approx(0.010 + 0.98 * 0.007).epsilon(k_eps));
  CHECK(a.ttft_s.max == Approx(0.017).epsilon(k_eps));
  CHECK(a.ttft_mean_s == Approx(0.037 / 3).epsilon(k_eps));
  // TPOTs 11.5 and 12 ms (r4 has one token): p50 11.75, p99 11.5 + 0.99 x 0.5.
  CHECK(a.tpot_s.count == 2);
  CHECK(a.tpot_s.p50 == Approx(0.01175).epsilon(k_eps));
  CHECK(a.tpot_s.p99 == Approx(0.0115 + 0.99 * 0.0005).epsilon(k_eps));
  // E2Es 10, 41, 56 ms.
  CHECK(a.e2e_s.p50 == Approx(0.041).epsilon(k_eps));
  CHECK(a.e2e_s.p99 == Approx(0.041 + 0.98 * 0.015).epsilon(k_eps));
  CHECK(b.ttft_s.p50 == Approx(0.010).epsilon(k_eps));
  CHECK(b.ttft_s.p99 == Approx(0.010 + 0.98 * 0.005).epsilon(k_eps));
  CHECK(b.tpot_s.count == 3);
  CHECK(b.tpot_s.p99 == Approx(0.010).epsilon(k_eps));
  CHECK(b.e2e_s.p50 == Approx(0.030).epsilon(k_eps));  // 20, 30, 45
  CHECK(b.e2e_s.p99 == Approx(0.030 + 0.98 * 0.015).epsilon(k_eps));

  // SLO 12 ms TTFT, 11 ms TPOT. Replica 0: TTFT met by r0 and r4; TPOT only by r4 (one token);
  // both by r4. Replica 1: TTFT by r1 and r5; TPOT by all three; both by r1 and r5.
  REQUIRE(a.slo);
  REQUIRE(b.slo);
  REQUIRE(a.slo->ttft);
  REQUIRE(a.slo->tpot);
  CHECK(a.slo->ttft->requests_met == 2);
  CHECK(a.slo->ttft->attainment == Approx(2.0 / 3).epsilon(k_eps));
  CHECK(a.slo->ttft->percentile_ms == Approx(16.86).epsilon(k_eps));
  CHECK_FALSE(a.slo->ttft->met);
  CHECK(a.slo->tpot->requests_met == 1);
  CHECK_FALSE(a.slo->tpot->met);  // p99 11.995 ms > 11 ms
  CHECK(a.slo->requests_met == 1);
  CHECK(a.slo->attainment == Approx(1.0 / 3).epsilon(k_eps));
  CHECK(b.slo->tpot->requests_met == 3);
  CHECK(b.slo->tpot->met);
  CHECK(b.slo->requests_met == 2);
  CHECK(b.slo->attainment == Approx(2.0 / 3).epsilon(k_eps));
  // Goodput over the run's duration (first arrival 0 to last release 131 ms), one accelerator
  // a replica: the replicas' goodputs add up to the cluster's.
  CHECK(a.slo->goodput_per_s == Approx(1 / 0.131).epsilon(k_eps));
  CHECK(b.slo->goodput_per_s == Approx(2 / 0.131).epsilon(k_eps));
  CHECK(a.slo->accelerators == 1);
  CHECK(a.slo->goodput_per_s_per_accelerator == Approx(1 / 0.131).epsilon(k_eps));
  REQUIRE(s.slo);
  CHECK(s.slo->requests_met == 3);
  CHECK(s.slo->accelerators == 2);
  CHECK(s.slo->goodput_per_s == Approx(a.slo->goodput_per_s + b.slo->goodput_per_s));
}

TEST_CASE("replica metrics: summary.json and the printed table carry them",
          "[metrics][cluster][replica_metrics]") {
  const RunOutput out = run_scenario(doc_of(k_two_replicas));
  const auto j = nlohmann::json::parse(out.summary_json);
  const auto& r0 = j.at("replicas").at(0);
  CHECK(r0.at("requests") == 3);
  CHECK(r0.at("swap_preemptions") == 0);
  CHECK(r0.at("ttft_s").at("count") == 3);
  CHECK(r0.at("ttft_s").at("p99").get<double>() == Approx(0.01686).epsilon(k_eps));
  CHECK(r0.at("tpot_s").at("exact") == true);
  CHECK(r0.at("e2e_s").at("p50").get<double>() == Approx(0.041).epsilon(k_eps));
  CHECK(r0.at("slo").at("ttft").at("requests_met") == 2);
  CHECK(r0.at("slo").at("requests_met") == 1);
  CHECK(r0.at("slo").at("accelerators") == 1);
  CHECK(j.at("swap_preemptions") == 0);
  // Without an slo section each replica's `slo` is null.
  const std::string no_slo = k_two_replicas.substr(0, k_two_replicas.find("slo:"));
  const auto j2 = nlohmann::json::parse(run_scenario(doc_of(no_slo)).summary_json);
  CHECK(j2.at("replicas").at(1).at("slo").is_null());
  CHECK(j2.at("replicas").at(1).at("tpot_s").at("count") == 3);

  const std::string table = summary_table(out.summary);
  CHECK_THAT(table, Catch::Contains("replica           routed  finished TTFT p50 ms TTFT p99 ms "
                                    "TPOT p99 ms  TTFT met  TPOT met   all met\n"
                                    "0                      3         3        10.0        16.9"
                                    "       12.00     66.7%     33.3%     33.3%\n"
                                    "1                      3         3        10.0        14.9"
                                    "       10.00     66.7%    100.0%     66.7%\n"));
  CHECK_THAT(summary_table(run_scenario(doc_of(no_slo)).summary),
             Catch::Contains("TPOT p99 ms\n0 ") && !Catch::Contains("all met"));
}

TEST_CASE("replica metrics: one pool of one replica has exactly the run's figures",
          "[metrics][cluster][replica_metrics]") {
  const std::string yaml =
      trace("0,32,5\n0.001,32,2\n0.015,32,3\n0.016,32,4\n") + k_engine +
      "cluster: {router: {kind: round_robin}, pools: [{name: only, replicas: 1}]}\n"
      "slo: {ttft_ms: 12, tpot_ms: 11}\n";
  const Summary s = run_scenario(doc_of(yaml)).summary;
  REQUIRE(s.replicas.size() == 1);
  REQUIRE(s.pools.size() == 1);
  for (const auto* d : {&s.replicas[0].ttft_s, &s.pools[0].ttft_s}) {
    CHECK(d->count == s.ttft_s.count);
    CHECK(d->p50 == s.ttft_s.p50);
    CHECK(d->p99 == s.ttft_s.p99);
  }
  CHECK(s.replicas[0].tpot_s.p90 == s.tpot_s.p90);
  CHECK(s.pools[0].e2e_s.p99 == s.e2e_s.p99);
  REQUIRE(s.slo);
  for (const auto& slo : {s.replicas[0].slo, s.pools[0].slo}) {
    REQUIRE(slo);
    CHECK(slo->requests_met == s.slo->requests_met);
    CHECK(slo->attainment == s.slo->attainment);
    CHECK(slo->ttft->percentile_ms == s.slo->ttft->percentile_ms);
    CHECK(slo->tpot->requests_met == s.slo->tpot->requests_met);
    CHECK(slo->goodput_per_s == s.slo->goodput_per_s);
  }
}

TEST_CASE("replica metrics: a single engine's summary has no replica table",
          "[metrics][cluster][replica_metrics]") {
  const std::string single = trace("0,32,5\n0.001,32,2\n") + k_engine;
  const RunOutput out = run_scenario(doc_of(single));
  CHECK(out.summary.replicas.empty());
  CHECK_THAT(summary_table(out.summary), !Catch::Contains("routed"));
  CHECK_FALSE(nlohmann::json::parse(out.summary_json).contains("replicas"));
}

TEST_CASE("replica metrics: per-replica and per-pool counts add up to the cluster's",
          "[metrics][cluster][replica_metrics]") {
  // Two pools of different speeds under Poisson load, with queueing: every request is
  // counted once per breakdown, and a pool's percentiles are those of its requests' values.
  const std::string yaml =
      "workload: {synthetic: {requests: 400, arrival: {kind: poisson, rate_per_s: 120},\n"
      "  prompt_tokens: {kind: uniform, min: 16, max: 400},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 40}}}\n"
      "step_time: {kind: linear, base_ms: 6, per_seq_ms: 0.5, per_prefill_token_ms: 0.02}\n"
      "scheduler: {kind: continuous, max_num_seqs: 16}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n"
      "cluster:\n  router: {kind: least_outstanding}\n  pools:\n"
      "    - {name: fast, replicas: 2}\n"
      "    - name: slow\n      replicas: 1\n"
      "      step_time: {kind: linear, base_ms: 12, per_seq_ms: 1, per_prefill_token_ms: 0.04}\n"
      "slo: {ttft_ms: 60, tpot_ms: 12}\n"
      "seed: 3\n";
  const RunOutput out = run_scenario(doc_of(yaml));
  const Summary& s = out.summary;
  REQUIRE(s.slo);
  REQUIRE(s.replicas.size() == 3);
  int64_t requests = 0, finished = 0, met = 0, ttft_met = 0, tpot_met = 0, ttft_n = 0;
  double goodput = 0;
  for (const ReplicaSummary& r : s.replicas) {
    REQUIRE(r.slo);
    requests += r.requests;
    finished += r.finished;
    met += r.slo->requests_met;
    ttft_met += r.slo->ttft->requests_met;
    tpot_met += r.slo->tpot->requests_met;
    ttft_n += r.ttft_s.count;
    goodput += r.slo->goodput_per_s;
    CHECK(r.requests == r.routed);  // without disaggregation a request stays where it is routed
  }
  CHECK(requests == s.requests);
  CHECK(finished == s.finished);
  CHECK(met == s.slo->requests_met);
  CHECK(ttft_met == s.slo->ttft->requests_met);
  CHECK(tpot_met == s.slo->tpot->requests_met);
  CHECK(ttft_n == s.ttft_s.count);
  CHECK(goodput == Approx(s.slo->goodput_per_s));
  // The run is loaded enough that the replicas differ (else the sums above prove little).
  CHECK(s.slo->requests_met < s.requests);
  CHECK(s.replicas[0].slo->attainment != s.replicas[2].slo->attainment);
  REQUIRE(s.pools.size() == 2);
  CHECK(s.pools[0].slo->requests_met + s.pools[1].slo->requests_met == s.slo->requests_met);
  CHECK(s.pools[0].requests == s.replicas[0].requests + s.replicas[1].requests);
  // The slow pool is its one replica.
  CHECK(s.pools[1].ttft_s.p99 == s.replicas[2].ttft_s.p99);
  CHECK(s.pools[1].slo->attainment == s.replicas[2].slo->attainment);
  // The table names each replica by its pool and its index within the pool, as cluster.links does.
  const std::string table = summary_table(s);
  const auto name_at = [&](size_t row) {  // the first word of the replica table's row-th row
    size_t at = table.find("\nreplica ");
    REQUIRE(at != std::string::npos);
    for (size_t k = 0; k <= row; ++k) at = table.find('\n', at + 1);
    return table.substr(at + 1, table.find(' ', at + 1) - at - 1);
  };
  CHECK(name_at(0) == "fast[0]");
  CHECK(name_at(1) == "fast[1]");
  CHECK(name_at(2) == "slow[0]");
  // The fast pool's percentiles are those of its requests' own values.
  Scenario sc = build_scenario(doc_of(yaml));
  Simulation sim(std::move(sc.components));
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  std::vector<double> ttft, tpot, e2e;
  for (const Request& r : rec.requests) {
    if (r.replica > 1 || r.state != RequestState::Released) continue;
    ttft.push_back((r.first_token - r.spec.arrival).seconds());
    e2e.push_back((r.release - r.spec.arrival).seconds());
    if (r.spec.output_tokens > 1)
      tpot.push_back((r.last_token - r.first_token).seconds() / (r.spec.output_tokens - 1));
  }
  const Distribution t = distribution(ttft), p = distribution(tpot), e = distribution(e2e);
  CHECK(s.pools[0].ttft_s.count == t.count);
  CHECK(s.pools[0].ttft_s.p50 == t.p50);
  CHECK(s.pools[0].ttft_s.p99 == t.p99);
  CHECK(s.pools[0].tpot_s.p90 == p.p90);
  CHECK(s.pools[0].e2e_s.p99 == e.p99);
  CHECK(s.pools[0].accelerators == 2);
  CHECK(s.pools[0].slo->accelerators == 2);
}

TEST_CASE(
    "replica metrics: disaggregated, TTFT belongs to the prefill replica, the rest to "
    "the decode replica",
    "[metrics][disagg][replica_metrics]") {
  // Steps of 10 ms; 1,000 KV bytes a prompt token over one 1 GB/s, 20 us link: a 1,000-token
  // prompt's KV arrives 1.02 ms after its prefill. Round robin over prefill replicas p[0]
  // (replica 0) and p[1] (replica 1); one decode replica d[0] (replica 2).
  //   r0 (t=0, 5 tokens) on p[0]: first token at 10 ms, on d[0] at 11.02: decodes alone
  //     11.02-21.02, then with r1 21.02-31.02, 31.02-41.02, alone 41.02-51.02: done at 51.02.
  //     TTFT 10, TPOT (51.02 - 10) / 4 = 10.255, E2E 51.02.
  //   r1 (t=5 ms, 3 tokens) on p[1]: first token at 15, on d[0] at 16.02, decodes from 21.02,
  //     done at 41.02: TTFT 10, TPOT (41.02 - 15) / 2 = 13.01, E2E 36.02.
  //   r2 (t=1 s, 1 token) on p[0]: done after its prefill, leaves from p[0]: TTFT 10, E2E 10.
  const std::string yaml =
      trace("0,1000,5\n0.005,1000,3\n1,1000,1\n") +
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n"
      "cluster:\n  router: {kind: round_robin}\n  decode_router: {kind: round_robin}\n"
      "  pools:\n    - {name: p, role: prefill, replicas: 2}\n"
      "    - {name: d, role: decode, replicas: 1}\n"
      "  kv_transfer: {bandwidth_gb_s: 1, latency_us: 20, kv_bytes_per_token: 1000}\n"
      "slo: {ttft_ms: 12, tpot_ms: 12}\n";
  const RunOutput out = run_scenario(doc_of(yaml));
  const Summary& s = out.summary;
  REQUIRE(s.replicas.size() == 3);
  const ReplicaSummary &p0 = s.replicas[0], &p1 = s.replicas[1], &d0 = s.replicas[2];
  // TTFT where the first token was made.
  CHECK(p0.ttft_s.count == 2);
  CHECK(p1.ttft_s.count == 1);
  CHECK(d0.ttft_s.count == 0);
  CHECK(p0.ttft_s.max == Approx(0.010).epsilon(k_eps));
  // Everything else where the request left.
  CHECK(p0.requests == 1);  // r2
  CHECK(p0.finished == 1);
  CHECK(p0.tpot_s.count == 0);
  CHECK(p0.e2e_s.max == Approx(0.010).epsilon(k_eps));
  CHECK(p1.requests == 0);
  CHECK(p1.e2e_s.count == 0);
  CHECK(d0.routed == 0);
  CHECK(d0.requests == 2);
  CHECK(d0.finished == 2);
  CHECK(d0.tpot_s.count == 2);
  CHECK(d0.tpot_s.max == Approx(0.01301).epsilon(k_eps));
  CHECK(d0.tpot_s.p50 == Approx((0.010255 + 0.01301) / 2).epsilon(k_eps));
  CHECK(d0.e2e_s.p50 == Approx((0.05102 + 0.03602) / 2).epsilon(k_eps));
  // SLOs: every TTFT (10 ms) meets 12 ms; r1's TPOT (13.01 ms) misses it; r2 (one token) meets
  // it. Both targets: r0 (counted on d[0]) and r2 (on p[0]).
  REQUIRE(p0.slo);
  REQUIRE(p0.slo->ttft);
  CHECK(p0.slo->ttft->requests_met == 2);
  CHECK(p0.slo->ttft->attainment == 1.0);
  REQUIRE(p0.slo->tpot);
  CHECK(p0.slo->tpot->requests_met == 1);
  CHECK(p0.slo->requests_met == 1);
  CHECK(p0.slo->attainment == 1.0);
  CHECK(p1.slo->ttft->requests_met == 1);
  CHECK_FALSE(p1.slo->tpot);  // no request left p[1]
  CHECK(p1.slo->requests_met == 0);
  CHECK(p1.slo->attainment == 0.0);
  CHECK_FALSE(d0.slo->ttft);  // no request was routed to d[0]
  CHECK(d0.slo->tpot->requests_met == 1);
  CHECK(d0.slo->tpot->attainment == 0.5);
  CHECK_FALSE(d0.slo->tpot->met);
  CHECK(d0.slo->requests_met == 1);
  CHECK(d0.slo->attainment == 0.5);
  REQUIRE(s.slo);
  CHECK(s.slo->requests_met == 2);
  CHECK(s.slo->requests_met == p0.slo->requests_met + p1.slo->requests_met + d0.slo->requests_met);
  // Pools: the same rule over their replicas.
  REQUIRE(s.pools.size() == 2);
  CHECK(s.pools[0].ttft_s.count == 3);
  CHECK(s.pools[0].requests == 1);
  CHECK(s.pools[0].slo->ttft->attainment == 1.0);
  CHECK(s.pools[0].slo->requests_met == 1);
  CHECK(s.pools[0].slo->accelerators == 2);
  CHECK(s.pools[1].ttft_s.count == 0);
  CHECK(s.pools[1].tpot_s.count == 2);
  CHECK(s.pools[1].slo->attainment == 0.5);
  CHECK(s.pools[1].slo->goodput_per_s == Approx(1 / 1.01).epsilon(k_eps));
  CHECK(s.pools[1].slo->goodput_per_s_per_accelerator == Approx(1 / 1.01).epsilon(k_eps));
  // The printed pool lines: TTFT mean on the prefill pool, TPOT mean on the decode pool.
  const std::string table = summary_table(s);
  CHECK_THAT(table, Catch::Contains("routed 3, handed off 2, finished 1; TTFT mean 10.0 ms\n"));
  CHECK_THAT(table, Catch::Contains("received 2, finished 2; TPOT mean 11.63 ms\n"));
  // d[0]'s TPOT p99: 10.255 + 0.99 x (13.01 - 10.255) ms.
  CHECK_THAT(table, Catch::Contains("\nd[0]                   0         2           -           -"
                                    "       12.98         -     50.0%     50.0%\n"));
}

TEST_CASE("replica metrics: swap preemptions are counted in total and where they happen",
          "[metrics][cluster][swap][replica_metrics]") {
  // The swap golden case of tests/schedulers/swap_test.cpp on replica 0 (r0, then r2 at 1 ms,
  // preempted by swapping at 83 ms); replica 1 serves one small request alone.
  const std::string kv = "kv: {policy: paged, capacity_tokens: 64, block_size: 16}\n";
  const std::string swap =
      "scheduler: {kind: continuous, max_num_seqs: 4, preemption_mode: swap, "
      "swap_bandwidth_gb_s: 1, kv_bytes_per_token: 100000";
  const std::string rest =
      "step_time: {kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}\n" + kv +
      "cluster: {replicas: 2, router: {kind: round_robin}}\n";
  const std::string rows = "0,16,20\n0.0005,4,2\n0.001,16,20\n";
  const RunOutput out = run_scenario(doc_of(trace(rows) + swap + "}\n" + rest));
  CHECK(out.summary.preemptions == 1);
  CHECK(out.summary.swap_preemptions == 1);
  REQUIRE(out.summary.replicas.size() == 2);
  CHECK(out.summary.replicas[0].preemptions == 1);
  CHECK(out.summary.replicas[0].swap_preemptions == 1);
  CHECK(out.summary.replicas[1].swap_preemptions == 0);
  CHECK(out.summary.replicas[0].e2e_s.max == Approx(0.1092).epsilon(k_eps));  // as golden
  const auto j = nlohmann::json::parse(out.summary_json);
  CHECK(j.at("swap_preemptions") == 1);
  CHECK(j.at("replicas").at(0).at("swap_preemptions") == 1);
  CHECK_THAT(summary_table(out.summary), Catch::Contains("(1 preemptions, 1 by swapping)"));
  // With the host swap space too small the preemption is by recompute: none by swapping.
  const RunOutput full =
      run_scenario(doc_of(trace(rows) + swap + ", swap_space_gb: 0.003}\n" + rest));
  CHECK(full.summary.preemptions == 1);
  CHECK(full.summary.swap_preemptions == 0);
  CHECK(full.summary.replicas[0].preemptions == 1);
  CHECK_THAT(summary_table(full.summary), Catch::Contains("(1 preemptions)\n"));
}

TEST_CASE("replica metrics: the single-engine swap golden case counts its swap",
          "[metrics][swap][replica_metrics]") {
  const std::string yaml =
      trace("0,16,20\n0.001,16,20\n") +
      "step_time: {kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}\n"
      "scheduler: {kind: continuous, max_num_seqs: 4, preemption_mode: swap, "
      "swap_bandwidth_gb_s: 1, kv_bytes_per_token: 100000}\n"
      "kv: {policy: paged, capacity_tokens: 64, block_size: 16}\n";
  const RunOutput out = run_scenario(doc_of(yaml));
  CHECK(out.summary.swap_preemptions == 1);
  CHECK(out.summary.e2e_s.max == Approx(0.1092).epsilon(k_eps));  // r1: 1 ms to 110.2 ms
}

}  // namespace t_metrics_replica_metrics_test
