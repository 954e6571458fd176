// Each class's figures on each replica of a cluster (summary.json's replicas[i].classes and the
// printed replica table's class rows; metrics/replica_classes.cpp), worked by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_replica_classes_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// A step takes 8 ms + 2 ms a sequence; round robin over two replicas: r0 and r2 on replica 0,
// r1 and r3 on replica 1. No two requests share a replica at once:
//   r0 chat  t=0,     2 tokens: first token at 10 ms, done at 20 ms  (replica 0)
//   r1 batch t=1 ms,  2 tokens: first token at 11 ms, done at 21 ms  (replica 1)
//   r2 batch t=100ms, 3 tokens: first token at 110 ms, done at 130   (replica 0)
//   r3 chat  t=101ms, 1 token:  first token and done at 111 ms       (replica 1)
std::string scenario(const std::string& extra) {
  const std::string path =
      write_temp("rc.csv",
                 "arrival_s,prompt_tokens,output_tokens,class\n0,32,2,chat\n0.001,32,2,batch\n"
                 "0.100,32,3,batch\n0.101,32,1,chat\n");
  return "workload: {trace: {path: " + path +
         "}}\n"
         "step_time: {kind: linear, base_ms: 8, per_seq_ms: 2}\n"
         "scheduler: {kind: continuous, max_num_seqs: 8}\n"
         "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n"
         "cluster: {replicas: 2, router: {kind: round_robin}}\n" +
         extra;
}

}  // namespace

TEST_CASE("replica classes: each replica's figures split by class", "[metrics][cluster][classes]") {
  const RunOutput out = run_scenario(doc_of(scenario("slo: {e2e_ms: 25}\n")));
  REQUIRE(out.summary.replicas.size() == 2);
  for (const ReplicaSummary& r : out.summary.replicas) {
    REQUIRE(r.classes.size() == 2);
    CHECK(r.classes[0].first == "chat");
    CHECK(r.classes[1].first == "batch");
  }
  const ReplicaClassSummary& chat0 = out.summary.replicas[0].classes[0].second;
  const ReplicaClassSummary& batch0 = out.summary.replicas[0].classes[1].second;
  const ReplicaClassSummary& chat1 = out.summary.replicas[1].classes[0].second;
  const ReplicaClassSummary& batch1 = out.summary.replicas[1].classes[1].second;
  CHECK(chat0.routed == 1);
  CHECK(chat0.finished == 1);
  CHECK(chat0.ttft_s.mean == Approx(0.010));
  CHECK(chat0.e2e_s.mean == Approx(0.020));
  CHECK(batch0.routed == 1);
  CHECK(batch0.e2e_s.mean == Approx(0.030));
  CHECK(batch0.tpot_s.mean == Approx(0.010));
  CHECK(chat1.e2e_s.mean == Approx(0.010));
  CHECK(batch1.e2e_s.mean == Approx(0.020));
  // E2E within 25 ms: every request but r2 (batch on replica 0).
  REQUIRE(batch0.slo);
  CHECK(batch0.slo->requests_met == 0);
  CHECK(chat0.slo->requests_met == 1);
  CHECK(batch1.slo->requests_met == 1);

  const auto j = nlohmann::json::parse(out.summary_json);
  CHECK(j.at("replicas").at(0).at("classes").at("batch").at("routed") == 1);
  CHECK(j.at("replicas").at(1).at("classes").at("chat").at("e2e_s").at("count") == 1);
  const std::string table = summary_table(out.summary);
  CHECK_THAT(table, Catch::Contains("\n  chat                 1         1"));
  CHECK_THAT(table, Catch::Contains("\n  batch                1         1"));
}

TEST_CASE("replica classes: a workload without classes has none in its replica rows",
          "[metrics][cluster][classes]") {
  const std::string path =
      write_temp("rc0.csv", "arrival_s,prompt_tokens,output_tokens\n0,32,2\n0.001,32,2\n");
  const RunOutput out =
      run_scenario(doc_of("workload: {trace: {path: " + path +
                          "}}\nstep_time: {kind: linear, base_ms: 8, per_seq_ms: 2}\n"
                          "scheduler: {kind: continuous, max_num_seqs: 8}\nkv: {policy: paged, "
                          "capacity_tokens: 65536}\n"
                          "cluster: {replicas: 2, router: {kind: round_robin}}\n"));
  CHECK(out.summary.replicas.at(0).classes.empty());
  CHECK_FALSE(nlohmann::json::parse(out.summary_json).at("replicas").at(0).contains("classes"));
}

}  // namespace t_metrics_replica_classes_test
