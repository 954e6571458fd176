// Admission and abandonment per class, per tenant and per request (sim/admission.h): a mix
// component's own timeout_s, cancellation a time after arrival (a trace's cancel_after_s column,
// or the abandonment.cancel.after_s draw), per-tenant token buckets, and admission with
// cluster.pools; hand-worked timelines on a 10 ms-a-step engine.
#include <catch2/catch.hpp>

#include "metrics/output.h"
#include "tests/support.h"

namespace t_sim_admission_classes_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_engine =
    "step_time: {kind: linear, base_ms: 10}\n"
    "kv: {policy: paged, capacity_tokens: 10000, block_size: 1}\n";
const std::string k_one_seat = "scheduler: {kind: continuous, max_num_seqs: 1}\n";

std::string trace(const std::string& name, const std::string& header, const std::string& rows) {
  return write_temp(name, header + "\n" + rows);
}

std::string statuses(const std::vector<Request>& r) {
  std::string s;
  for (const Request& q : r) s += std::string(status_name(q)) + " ";
  return s;
}

// Class a: a0 and a1 (t=0, prompt 3, 5 tokens), with timeout_s 0.015; class b: b0 (t=0).
// Merged ids: a0 0, a1 1, b0 2. One seat: a0 runs 0-50 ms (first token at 10).
std::string two_classes(const std::string& extra) {
  const std::string a = trace("ca.csv", "arrival_s,prompt_tokens,output_tokens", "0,3,5\n0,3,5\n");
  const std::string b = trace("cb.csv", "arrival_s,prompt_tokens,output_tokens", "0,3,5\n");
  return "workload: {mix: {components: [{name: a, timeout_s: 0.015, trace: {path: " + a +
         "}}, {name: b, trace: {path: " + b + "}}]}}\n" + k_engine + k_one_seat + extra;
}

}  // namespace

TEST_CASE("admission classes: a class's timeout_s replaces abandonment.timeout_s",
          "[sim][admission]") {
  // a1 leaves at its class's 15 ms, b0 at the section's 35 ms.
  auto r = run_requests(two_classes("abandonment: {timeout_s: 0.035}\n"));
  REQUIRE(r.size() == 3);
  CHECK(statuses(r) == "finished timed_out timed_out ");
  CHECK(r[1].release.count_ns() == ms(15));
  CHECK_THAT(r[1].reject_reason, Catch::Contains("0.015 s") && Catch::Contains("its class's"));
  CHECK(r[2].release.count_ns() == ms(35));
  CHECK_THAT(r[2].reject_reason, Catch::Contains("abandonment.timeout_s"));
  // Without the section the class's timeout still holds; b0 waits and runs 50-100 ms.
  r = run_requests(two_classes(""));
  CHECK(statuses(r) == "finished timed_out finished ");
  CHECK(r[1].release.count_ns() == ms(15));
  CHECK(r[2].release.count_ns() == ms(100));
}

TEST_CASE("admission classes: cancel_after_s cancels a time after arrival, served or not",
          "[sim][admission]") {
  // One seat. r0 (t=0, 10 tokens, cancel_after_s 0.035): tokens at 10, 20, 30 ms; at 35 ms it
  // is in the step 30-40, so it leaves at 40 with 3 tokens (that step's token is not counted).
  // r1 (t=0, cancel_after_s 0.005) waits behind it and leaves at 5 ms. r2 (empty cell) runs
  // 40-60 ms.
  const std::string path = trace("cs.csv", "arrival_s,prompt_tokens,output_tokens,cancel_after_s",
                                 "0,3,10,0.035\n0,3,2,0.005\n0,3,2,\n");
  const auto r = run_requests("workload: {trace: {path: " + path + "}}\n" + k_engine + k_one_seat);
  REQUIRE(r.size() == 3);
  CHECK(statuses(r) == "cancelled cancelled finished ");
  CHECK(r[0].release.count_ns() == ms(40));
  CHECK(r[0].generated_tokens == 3);
  CHECK(r[0].kv_held_tokens == 0);
  CHECK_THAT(r[0].reject_reason, Catch::Contains("0.035 s after its arrival"));
  CHECK(r[1].release.count_ns() == ms(5));
  CHECK(r[1].first_admitted == Time::max());
  CHECK(r[2].release.count_ns() == ms(60));
}

TEST_CASE("admission classes: cancel.after_s draws the time for the cancelled share",
          "[sim][admission]") {
  // Every request cancelled 25 ms after its arrival: r0 in the step 20-30 leaves at 30, r1
  // (queued) at 25.
  const std::string path =
      trace("cd.csv", "arrival_s,prompt_tokens,output_tokens", "0,3,10\n0,3,10\n");
  const auto yaml = [&](const std::string& after) {
    return "workload: {trace: {path: " + path + "}}\n" + k_engine + k_one_seat +
           "abandonment: {cancel: {fraction: 1, after_s: " + after + "}}\n";
  };
  auto r = run_requests(yaml("{kind: fixed, value_s: 0.025}"));
  CHECK(statuses(r) == "cancelled cancelled ");
  CHECK(r[0].release.count_ns() == ms(30));
  CHECK(r[1].release.count_ns() == ms(25));
  // uniform and exponential draws land in their range, the same for the same seed.
  r = run_requests(yaml("{kind: uniform, min_s: 0.012, max_s: 0.018}"));
  CHECK(r[1].release >= Time::from_ms(12));
  CHECK(r[1].release < Time::from_ms(18));
  const auto again = run_requests(yaml("{kind: uniform, min_s: 0.012, max_s: 0.018}"));
  CHECK(again[1].release == r[1].release);
  CHECK_THAT(input_error_of(yaml("{kind: uniform, min_s: 0.02, max_s: 0.01}")),
             Catch::Contains("max_s") && Catch::Contains("must exceed min_s"));
  CHECK_THAT(input_error_of(yaml("{kind: normal}")), Catch::Contains("exponential"));
}

TEST_CASE("admission classes: a tenant's own rate and burst replace the default bucket",
          "[sim][admission]") {
  // Default: 1 a second, burst 1; tenant b: burst 3. At t=0: a passes one and sheds one; b
  // passes three and sheds its fourth.
  const std::string path = trace("ct.csv", "arrival_s,prompt_tokens,output_tokens,tenant",
                                 "0,3,2,a\n0,3,2,a\n0,3,2,b\n0,3,2,b\n0,3,2,b\n0,3,2,b\n");
  const auto yaml = [&](const std::string& rate) {
    return "workload: {trace: {path: " + path + "}}\n" + k_engine +
           "scheduler: {kind: continuous, max_num_seqs: 8}\nadmission: {rate_limit: " + rate +
           "}\n";
  };
  auto r = run_requests(yaml("{rate_per_s: 1, burst: 1, tenants: {b: {rate_per_s: 1, burst: 3}}}"));
  CHECK(statuses(r) == "finished shed finished finished finished shed ");
  // Only b limited: a passes everything.
  r = run_requests(yaml("{tenants: {b: {rate_per_s: 1, burst: 2}}}"));
  CHECK(statuses(r) == "finished finished finished finished shed shed ");
  CHECK_THAT(input_error_of(yaml("{tenants: {b: {burst: 2}}}")), Catch::Contains("rate_per_s"));
  CHECK_THAT(input_error_of(yaml("{burst: 2, tenants: {b: {rate_per_s: 1}}}")),
             Catch::Contains("give rate_per_s with it"));
  const std::string no_tenants =
      trace("cn.csv", "arrival_s,prompt_tokens,output_tokens", "0,3,2\n");
  CHECK_THAT(
      input_error_of("workload: {trace: {path: " + no_tenants + "}}\n" + k_engine + k_one_seat +
                     "admission: {rate_limit: {tenants: {b: {rate_per_s: 1}}}}\n"),
      Catch::Contains("names tenants but the workload names none"));
}

TEST_CASE("admission classes: admission and abandonment work with cluster.pools",
          "[sim][admission][cluster]") {
  // Two mixed pools of one seat each, round robin: r0, r2, r4 -> a; r1, r3, r5 -> b. At t=0,
  // with queue_cap 2, r4 and r5 find two queued and are rejected; r0 and r1 run 0-50 ms; r2
  // and r3 wait and time out at 15 ms. Then prefill/decode pools: the same sections end every
  // request exactly once.
  const std::string path = trace("cp.csv", "arrival_s,prompt_tokens,output_tokens",
                                 "0,3,5\n0,3,5\n0,3,5\n0,3,5\n0,3,5\n0,3,5\n");
  const std::string sections = "admission: {queue_cap: 2}\nabandonment: {timeout_s: 0.015}\n";
  RunOutput out = run_scenario(
      doc_of("workload: {trace: {path: " + path + "}}\n" + k_engine + k_one_seat +
             "cluster: {router: {kind: round_robin}, pools: [{name: a, replicas: 1}, {name: b, "
             "replicas: 1}]}\n" +
             sections));
  REQUIRE(out.summary.by_status);
  CHECK(out.summary.by_status->finished == 2);
  CHECK(out.summary.by_status->timed_out == 2);
  CHECK(out.summary.by_status->rejected == 2);
  out = run_scenario(doc_of(
      "workload: {trace: {path: " + path + "}}\n" + k_engine + k_one_seat +
      "cluster: {router: {kind: round_robin}, decode_router: {kind: round_robin},\n"
      "  pools: [{name: p, role: prefill, replicas: 1}, {name: d, role: decode, replicas: 1}],\n"
      "  kv_transfer: {bandwidth_gb_s: 50, kv_bytes_per_token: 1024}}\n" +
      sections));
  REQUIRE(out.summary.by_status);
  const StatusCounts& s = *out.summary.by_status;
  CHECK(s.finished + s.rejected + s.shed + s.timed_out + s.cancelled + s.unfinished == 6);
  CHECK(s.finished >= 1);
  CHECK(s.rejected >= 1);
}

}  // namespace t_sim_admission_classes_test
