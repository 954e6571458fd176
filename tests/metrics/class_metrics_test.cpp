// Per-class figures (summary.json's classes, docs/metrics.md#classes) and requests.csv's class
// and priority columns, on tests/metrics/slo_test.cpp's tiny trace with every time worked by
// hand, its requests split into two classes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "metrics/metrics.h"
#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_class_metrics_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Every step lasts 10 ms per sequence in it; two seats; 100 KV tokens.
// r0 (t=0, prompt 1, 3 tokens, chat, priority -1), r1 (t=0, 1, 2, batch), r2 (t=0, 1, 1, chat),
// r3 (t=0, prompt 1000: larger than the KV cache, rejected at arrival, batch),
// r4 (t=100 ms, 1, 2, chat).
// t=0   prefill r0, r1 (r2 waits for a seat): 2 x 10 = 20 ms -> t=20: r0, r1 token 1
// t=20  decode r0, r1: 20 ms                                 -> t=40: r0 token 2, r1 done
// t=40  decode r0 + prefill r2: 20 ms                        -> t=60: r0 done, r2 done
// t=100 prefill r4: 10 ms -> t=110 token 1; decode -> t=120 done
// chat:  TTFT r0 20, r2 60, r4 10 ms; TPOT r0 (60-20)/2 = 20, r4 10 ms (r2: one token);
//        E2E r0 60, r2 60, r4 20 ms; queue r0 0, r2 40, r4 0 ms.
// batch: r1 TTFT 20, TPOT 20, E2E 40, queue 0 ms; r3 rejected.
// The run lasts 0 to 120 ms = 0.12 s.
std::string scenario(const std::string& slo) {
  const std::string path =
      write_temp("classes.csv",
                 "arrival_s,prompt_tokens,output_tokens,class,priority\n0,1,3,chat,-1\n"
                 "0,1,2,batch,\n0,1,1,chat,\n0,1000,1,batch,\n0.1,1,2,chat,\n");
  return "workload: {trace: {path: " + path +
         "}}\nstep_time: {kind: linear, per_seq_ms: 10}\n"
         "scheduler: {kind: continuous, max_num_seqs: 2}\n"
         "kv: {policy: paged, capacity_tokens: 100, block_size: 1}\n" +
         slo;
}

}  // namespace

TEST_CASE("classes: each class's counts, latencies and SLO attainment", "[metrics]") {
  const RunOutput out = run_scenario(doc_of(scenario("slo: {ttft_ms: 25, tpot_ms: 15}\n")));
  REQUIRE(out.summary.classes.size() == 2);
  CHECK(out.summary.classes[0].first == "chat");  // the trace's order of first appearance
  CHECK(out.summary.classes[1].first == "batch");
  const ClassSummary& chat = out.summary.classes[0].second;
  const ClassSummary& batch = out.summary.classes[1].second;
  CHECK(chat.requests == 3);
  CHECK(chat.finished == 3);
  CHECK(chat.rejected == 0);
  CHECK(batch.requests == 2);
  CHECK(batch.finished == 1);
  CHECK(batch.rejected == 1);
  // chat TTFT 10, 20, 60 ms: mean 30; p50 20; p90 at rank 1.8: 20 + 0.8 x 40 = 52;
  // p99 at rank 1.98: 20 + 0.98 x 40 = 59.2.
  CHECK(chat.ttft_s.count == 3);
  CHECK(chat.ttft_s.mean == Approx(0.030));
  CHECK(chat.ttft_s.p50 == Approx(0.020));
  CHECK(chat.ttft_s.p90 == Approx(0.052));
  CHECK(chat.ttft_s.p99 == Approx(0.0592));
  CHECK(chat.ttft_s.max == Approx(0.060));
  // chat TPOT 10 and 20 ms: mean and p50 15; E2E 20, 60, 60: mean 46.667; queue 0, 0, 40.
  CHECK(chat.tpot_s.count == 2);
  CHECK(chat.tpot_s.mean == Approx(0.015));
  CHECK(chat.tpot_s.p50 == Approx(0.015));
  CHECK(chat.e2e_s.mean == Approx(0.140 / 3));
  CHECK(chat.queue_s.mean == Approx(0.040 / 3));
  CHECK(chat.queue_s.max == Approx(0.040));
  CHECK(batch.ttft_s.count == 1);
  CHECK(batch.ttft_s.p99 == Approx(0.020));
  CHECK(batch.tpot_s.mean == Approx(0.020));
  CHECK(batch.e2e_s.mean == Approx(0.040));
  // SLO TTFT 25 ms, TPOT 15 ms. chat: TTFT met by r0, r4 (2 of 3); TPOT by r2 (one token) and
  // r4 (2 of 3); both by r4 alone: 1/3, goodput 1 / 0.12 s. batch: r1 meets TTFT only, r3
  // meets nothing: TTFT 1 of 2, none meets both.
  REQUIRE(chat.slo);
  REQUIRE(batch.slo);
  CHECK(chat.slo->ttft->requests_met == 2);
  CHECK(chat.slo->ttft->attainment == Approx(2.0 / 3));
  CHECK(chat.slo->tpot->requests_met == 2);
  CHECK(chat.slo->requests_met == 1);
  CHECK(chat.slo->attainment == Approx(1.0 / 3));
  CHECK(chat.slo->goodput_per_s == Approx(1 / 0.12));
  CHECK(batch.slo->ttft->attainment == Approx(0.5));
  CHECK(batch.slo->requests_met == 0);
  CHECK(batch.slo->goodput_per_s == 0);
  // The classes add up to the run.
  CHECK(out.summary.slo->requests_met == 1);
  CHECK(out.summary.requests == 5);

  // The printed summary has a line per class.
  CHECK_THAT(summary_table(out.summary),
             Catch::Contains("class      chat: 3 finished, 0 rejected; TTFT p50 20.0 ms, p99 "
                             "59.2 ms; ITL p99 20.00 ms; 33.3% meet the SLO\n"
                             "class      batch: 1 finished, 1 rejected; TTFT p50 20.0 ms, p99 "
                             "20.0 ms; ITL p99 20.00 ms; 0.0% meet the SLO\n"));

  const nlohmann::json j = nlohmann::json::parse(out.summary_json);
  CHECK(j["classes"]["chat"]["requests"] == 3);
  CHECK(j["classes"]["batch"]["rejected"] == 1);
  CHECK(j["classes"]["chat"]["slo"]["requests_met"] == 1);
}

TEST_CASE("classes: requests.csv names each request's class and priority", "[metrics]") {
  const RunOutput out = run_scenario(doc_of(scenario("")));
  const std::string& csv = out.requests_csv;
  CHECK(csv.substr(0, csv.find('\n')) ==
        "id,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,release_s,ttft_s,tpot_s,"
        "e2e_s,queue_s,preemptions,status,reason,class,priority,server_ttft_s,tenant");
  // r0: finished, chat, priority -1; r3: rejected (its reason quoted), batch, priority 0.
  CHECK_THAT(csv, Catch::Contains("\n0,0.000000000,1,3,0.020000000,0.060000000,0.060000000,"
                                  "0.020000000,0.020000000,0.060000000,0.000000000,0,finished,,"
                                  "chat,-1,0.020000000,\n"));
  CHECK_THAT(csv, Catch::Contains("\",batch,0,,\n4,"));
  // Without an slo section the classes have no slo block; a workload without classes has no
  // classes section at all.
  REQUIRE(out.summary.classes.size() == 2);
  CHECK_FALSE(out.summary.classes[0].second.slo);
  const RunOutput plain = run_scenario(doc_of(trace_scenario(
      "0,1,3\n", "{kind: linear, per_seq_ms: 10}", "{kind: continuous, max_num_seqs: 2}",
      "{policy: paged, capacity_tokens: 100, block_size: 1}")));
  CHECK(plain.summary.classes.empty());
  CHECK(nlohmann::json::parse(plain.summary_json).count("classes") == 0);
  CHECK_THAT(plain.requests_csv, Catch::EndsWith(",finished,,,0,0.010000000,\n"));
}

}  // namespace t_metrics_class_metrics_test
