// Replica failures (sim/failures.h): a hand-worked retry after a failure, requests waiting at
// the router while every replica is down (or failing there), every request ending exactly once
// with its KV back, the same seed giving the same failures, the parallel engine's fallback and
// bad sections refused.
#include "sim/failures.h"

#include <catch2/catch.hpp>
#include <map>

#include "metrics/energy.h"
#include "metrics/run_scenario.h"
#include "tests/support.h"

namespace t_sim_failures_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Two replicas behind a round-robin router, 10 ms a step, up to 4 sequences each.
std::string two_replicas(const std::string& rows, const std::string& failures) {
  return trace_scenario(rows, "{kind: linear, base_ms: 10}", "{kind: continuous, max_num_seqs: 4}",
                        "{policy: paged, capacity_tokens: 10000, block_size: 1}") +
         "cluster: {replicas: 2, router: {kind: round_robin}, failures: " + failures + "}\n";
}

}  // namespace

TEST_CASE("failures: a failed replica's request is retried on the other from its arrival",
          "[sim][failures]") {
  // r0 -> replica 0, r1 -> replica 1 (round robin), both at t=0 with 3 prompt and 5 output
  // tokens: prefill 0-10 ms, decodes 10-20, 20-30, ... Replica 0 fails at 25 ms, in its step
  // 20-30: r0 (context 4) loses its KV and joins replica 1, which finishes its step at 30, then
  // runs r1's decode beside r0's prefill 30-40 (r0's first token at 40: TTFT 40 ms from its
  // arrival), r1 ends at 50 and r0 decodes 40-80.
  const std::string yaml = two_replicas("0,3,5\n0,3,5\n",
                                        "{script: [{replica: 0, at_s: 0.025, "
                                        "down_s: 1}]}");
  const auto r = run_requests(yaml);
  REQUIRE(r.size() == 2);
  CHECK(std::string(status_name(r[0])) == "finished");
  CHECK(r[0].replica == 1);
  CHECK(r[0].spec.retries == 1);
  CHECK(r[0].spec.arrival.count_ns() == 0);
  CHECK(r[0].first_token.count_ns() == ms(40));
  CHECK(r[0].release.count_ns() == ms(80));
  CHECK(r[1].release.count_ns() == ms(50));
  CHECK(r[1].spec.retries == 0);

  const RunOutput out = run_scenario(doc_of(yaml + "slo: {ttft_ms: 20}\n"), true);
  REQUIRE(out.summary.failures);
  const FailureSummary& f = *out.summary.failures;
  CHECK(f.failures == 1);
  CHECK(f.retries == 1);
  CHECK(f.failed_requests == 0);
  CHECK(f.lost_tokens == 4);
  CHECK(f.lost_steps == 1);
  // Replica 0 is down from 25 ms to the run's end at 80 ms (its recovery at 1.025 s never
  // comes: nothing is left to serve), of 2 x 80 ms.
  CHECK(f.downtime_s == Approx(0.055));
  CHECK(f.availability == Approx(1 - 0.055 / 0.160));
  // Without the failure both meet the 20 ms TTFT; with it r0's is 40 ms.
  CHECK(f.slo_attainment == Approx(0.5));
  CHECK(f.slo_attainment_without_failures == Approx(1.0));
  CHECK(f.slo_attainment_cost == Approx(0.5));
  REQUIRE(out.summary.by_status);
  CHECK(out.summary.by_status->failed == 0);
  CHECK(out.summary.replicas.at(0).busy_share < out.summary.replicas.at(1).busy_share);
}

TEST_CASE("failures: on_failure fail or max_retries 0 ends the request with status failed",
          "[sim][failures]") {
  for (const char* how : {"on_failure: fail", "max_retries: 0"}) {
    const auto r = run_requests(
        two_replicas("0,3,5\n0,3,5\n",
                     fmt::format("{{script: [{{replica: 0, at_s: 0.025, down_s: 1}}], {}}}", how)));
    REQUIRE(r.size() == 2);
    CHECK(std::string(status_name(r[0])) == "failed");
    CHECK(r[0].release.count_ns() == ms(25));
    CHECK(r[0].kv_held_tokens == 0);
    CHECK(std::string(status_name(r[1])) == "finished");
  }
}

TEST_CASE("failures: with every replica down arrivals wait at the router or fail there",
          "[sim][failures]") {
  // Both replicas down from 5 ms to 100 ms; r0 arrives at 10 ms. It waits and is served from
  // 100 ms (prefill 100-110: TTFT 100 ms), or with on_failure: fail ends at once.
  const std::string down =
      "[{replica: 0, at_s: 0.005, down_s: 0.095}, {replica: 1, at_s: 0.005, down_s: 0.095}]";
  const auto waited = run_requests(two_replicas("0.01,3,2\n", "{script: " + down + "}"));
  REQUIRE(waited.size() == 1);
  CHECK(std::string(status_name(waited[0])) == "finished");
  CHECK(waited[0].first_token.count_ns() == ms(110));
  CHECK(waited[0].release.count_ns() == ms(120));
  const auto failed =
      run_requests(two_replicas("0.01,3,2\n", "{script: " + down + ", on_failure: fail}"));
  REQUIRE(failed.size() == 1);
  CHECK(std::string(status_name(failed[0])) == "failed");
  CHECK(failed[0].release.count_ns() == ms(10));
}

TEST_CASE("failures: every request ends exactly once with its KV back under drawn failures",
          "[sim][failures]") {
  // 300 requests over 3 s on 4 replicas failing every ~0.5 s for ~0.1 s; the check mode holds
  // KV use to what running requests hold at every step and failure.
  std::string rows;
  for (int i = 0; i < 300; ++i) rows += fmt::format("{},{},{}\n", i * 0.01, 20 + i % 50, 5 + i % 7);
  for (const char* extra : {"", ", on_failure: fail", ", max_retries: 1"})
    for (const char* kv : {"{policy: paged, capacity_tokens: 4000, block_size: 16}",
                           "{policy: paged, capacity_tokens: 4000, block_size: 16, "
                           "prefix_caching: true}"}) {
      const std::string yaml =
          trace_scenario(rows, "{kind: linear, base_ms: 5, per_prefill_token_ms: 0.01}",
                         "{kind: continuous, max_num_seqs: 8}", kv) +
          "cluster: {replicas: 4, router: {kind: least_outstanding}, failures: {mtbf_h: "
          "0.0001389, mttr_h: 0.0000278" +
          extra + "}}\n";
      const auto r = run_requests(yaml);
      REQUIRE(r.size() == 300);
      std::map<std::string, int> n;
      for (size_t i = 0; i < r.size(); ++i) {
        CHECK(r[i].spec.id == i);
        ++n[status_name(r[i])];
      }
      CHECK(n["finished"] + n["failed"] == 300);
      if (std::string(extra).empty()) CHECK(n["failed"] == 0);
      if (!std::string(extra).empty()) CHECK(n["failed"] > 0);
    }
}

TEST_CASE("failures: the same seed gives the same failures whatever the routing",
          "[sim][failures]") {
  auto spec = std::make_shared<FailureSpec>();
  spec->mtbf_h = 1;
  spec->mttr_h = 0.1;
  spec->accelerators = {1, 8, 1};
  auto changes = [&](uint64_t seed, uint32_t replicas, uint32_t rep) {
    FailureClock c(spec, replicas, seed);
    std::vector<int64_t> t;
    for (int i = 0; i < 6; ++i) {
      t.push_back(c.next(rep).count_ns());
      c.advance(rep, c.next(rep));
    }
    return t;
  };
  CHECK(changes(7, 3, 0) == changes(7, 3, 0));
  CHECK(changes(7, 3, 0) != changes(8, 3, 0));
  CHECK(changes(7, 3, 0) != changes(7, 3, 2));  // each replica its own stream
  CHECK(changes(7, 3, 2) == changes(7, 4, 2));  // whatever the others
  // Eight accelerators fail eight times as often: the first failure comes sooner on average.
  double one = 0, eight = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    one += static_cast<double>(changes(seed, 3, 0)[0]);
    eight += static_cast<double>(changes(seed, 3, 1)[0]);
  }
  CHECK(eight * 4 < one);
  // In a run, the router changes where requests go, not when replicas fail.
  std::string rows;
  for (int i = 0; i < 200; ++i) rows += fmt::format("{},{},{}\n", i * 0.01, 20, 5 + i % 7);
  auto failures_with = [&](const char* router) {
    const std::string yaml =
        trace_scenario(rows, "{kind: linear, base_ms: 5}", "{kind: continuous, max_num_seqs: 8}",
                       "{policy: paged, capacity_tokens: 4000}") +
        "cluster: {replicas: 4, router: {kind: " + router +
        "}, failures: {mtbf_h: 0.0002, mttr_h: 0.00003}}\nseed: 5\n";
    return run_scenario(doc_of(yaml), true).summary.failures->failures;
  };
  CHECK(failures_with("round_robin") == failures_with("least_outstanding"));
  CHECK(failures_with("round_robin") > 0);
}

TEST_CASE("failures: the parallel engine falls back to the sequential one with a notice",
          "[sim][failures]") {
  const std::string yaml =
      trace_scenario("0,3,5\n0,3,5\n", "{kind: linear, base_ms: 10}",
                     "{kind: continuous, max_num_seqs: 4}",
                     "{policy: paged, capacity_tokens: 100}") +
      "cluster: {replicas: 2, router: {kind: round_robin, load_refresh_ms: 5}, failures: "
      "{script: [{replica: 0, at_s: 0.025, down_s: 1}]}}\n";
  RunOptions o;
  o.threads = 2;
  const RunOutput out = run_scenario(doc_of(yaml), o);
  CHECK_THAT(out.engine_notice, Catch::Contains("failures"));
  CHECK(out.summary.failures->retries == 1);
}

TEST_CASE("failures: a replica down draws no power while it is", "[sim][failures]") {
  // Two replicas of one chip (idle 100 W, peak 700 W), 10 s, never active: 2 x 100 W x 10 s;
  // replica 1 down for 4 s of them takes 400 J off.
  RunStats stats;
  stats.replicas.resize(2);
  const std::vector<PowerSpec> power(2, PowerSpec{100, 700, "", "", ""});
  const std::vector<int64_t> chips{1, 1};
  CHECK(energy_summary(stats, power, chips, 10, 1, 1)->joules == Approx(2000));
  stats.replicas[1].down_s = 4;
  CHECK(energy_summary(stats, power, chips, 10, 1, 1)->joules == Approx(1600));
  CHECK(energy_summary(stats, power, chips, 10, 1, 1)->idle_joules == Approx(1600));
}

TEST_CASE("failures: bad sections are refused naming the key and what is allowed",
          "[sim][failures]") {
  const std::string base = two_replicas("0,3,2\n", "");
  auto with = [&](const std::string& f) {
    return base.substr(0, base.size() - std::string("}\n").size()) + f + "}\n";
  };
  CHECK_THAT(input_error_of(with("{script: [{replica: 2, at_s: 1, down_s: 1}]}")),
             Catch::Contains("cluster.failures.script[0].replica"));
  CHECK_THAT(input_error_of(with("{script: [{replica: 0, at_s: 1, down_s: 0}]}")),
             Catch::Contains("down_s"));
  CHECK_THAT(input_error_of(with("{mtbf_h: 0, mttr_h: 1}")), Catch::Contains("mtbf_h"));
  CHECK_THAT(input_error_of(with("{mtbf_h: 10}")), Catch::Contains("mttr_h"));
  CHECK_THAT(input_error_of(with("{mttr_h: 1}")), Catch::Contains("mttr_h"));
  CHECK_THAT(input_error_of(with("{}")), Catch::Contains("script"));
  CHECK_THAT(input_error_of(with("{mtbf_h: 1, mttr_h: 1, on_failure: ignore}")),
             Catch::Contains("on_failure"));
  CHECK_THAT(input_error_of(with("{mtbf_h: 1, mttr_h: 1, max_retries: -1}")),
             Catch::Contains("max_retries"));
  const std::string path = write_temp("bad-failures.yaml", with("{mtbf_h: -1, mttr_h: 1}"));
  const CliResult c = cli({"run", path, "--no-progress", "--out", temp_dir().string()});
  CHECK(c.code == 2);
  CHECK_THAT(c.err, Catch::Contains("cluster.failures.mtbf_h"));
}

}  // namespace t_sim_failures_test
