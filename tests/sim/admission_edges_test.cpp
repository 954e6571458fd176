// Admission (sim/admission.cpp) at its exact edges, hand-worked on a linear step model: an SLO
// estimate exactly at the target is queued and one sequence more is refused (each waiting
// prefill counts as a sequence and by its tokens left, a chunked prefill already running by
// what it has not computed yet), a token bucket refilled to exactly one token passes, a queue
// holding exactly queue_cap - 1 requests takes one more, and cancellations at a request's first
// token or after a time of 1 ns.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/request.h"
#include "tests/support.h"

namespace t_sim_admission_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::vector<Request> run_trace(const std::string& header, const std::string& rows,
                               const std::string& scheduler, const std::string& extra,
                               const std::string& step_time) {
  const std::string path = write_temp("trace.csv", header + "\n" + rows);
  return run_requests("workload: {trace: {path: " + path + "}}\nstep_time: " + step_time +
                      "\nscheduler: " + scheduler +
                      "\nkv: {policy: paged, capacity_tokens: 10000, block_size: 1}\n" + extra);
}

std::string statuses(const std::vector<Request>& r) {
  std::string out;
  for (const Request& q : r) out += std::string(status_name(q)) + " ";
  return out;
}

}  // namespace

TEST_CASE("admission edges: an SLO estimate exactly at the target is queued, one more refused",
          "[sim][admission]") {
  // Step = 10 ms + 1 ms a prefill token + 2 ms a sequence; target 26 ms; all arrive at t=0 on an
  // engine that has not started (nothing runs before the first step).
  //   r0 (10 tokens): 10 + 10 + 2 = 22 ms: queued.
  //   r1 (10): r0's 10 ahead and its own: 10 + 20 + 4 = 34 > 26: refused.
  //   r2 (2): 10 + 12 + 4 = 26 = the target: queued.
  //   r3 (1): 10 + 13 + 6 = 29 > 26: refused (it would pass counting its tokens only: 23 ms).
  const std::string step = "{kind: linear, base_ms: 10, per_prefill_token_ms: 1, per_seq_ms: 2}";
  const auto r = run_trace("arrival_s,prompt_tokens,output_tokens",
                           "0,10,2\n0,10,2\n0,2,2\n0,1,2\n", "{kind: continuous, max_num_seqs: 8}",
                           "admission: {slo_reject: true}\nslo: {ttft_ms: 26}\n", step);
  REQUIRE(r.size() == 4);
  CHECK(statuses(r) == "finished rejected finished rejected ");
  CHECK_THAT(r[1].reject_reason, Catch::Contains("estimated TTFT 34 ms") &&
                                     Catch::Contains("the 20 tokens ahead") &&
                                     Catch::Contains("its target 26 ms"));
  CHECK_THAT(r[3].reject_reason, Catch::Contains("estimated TTFT 29 ms"));
}

TEST_CASE("admission edges: a running chunked prefill counts by the tokens it has left",
          "[sim][admission]") {
  // Chunks of 4 tokens, step = 10 ms + 1 ms a prefill token; target 22 ms. r0 (12 tokens, t=0:
  // 10 + 12 = 22 ms, queued) prefills 4 tokens a step: 0-14, 14-28, 28-42 ms. r1 (6 tokens)
  // arrives at 15 ms, while r0 has 8 left (4 computed): 10 + 8 + 6 = 24 > 22: refused. r2 (8
  // tokens) at 29 ms, r0 has 4 left: 10 + 4 + 8 = 22, the target: queued. (Counting r0's whole
  // prompt would refuse r2: 10 + 12 + 8 = 30.)
  const std::string step = "{kind: linear, base_ms: 10, per_prefill_token_ms: 1}";
  const auto r =
      run_trace("arrival_s,prompt_tokens,output_tokens", "0,12,2\n0.015,6,2\n0.029,8,2\n",
                "{kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 4, "
                "chunked_prefill: true}",
                "admission: {slo_reject: true}\nslo: {ttft_ms: 22}\n", step);
  REQUIRE(r.size() == 3);
  CHECK(statuses(r) == "finished rejected finished ");
  CHECK_THAT(r[1].reject_reason, Catch::Contains("estimated TTFT 24 ms"));
}

TEST_CASE(
    "admission edges: a bucket refilled to exactly one token passes, a queue below its cap "
    "takes one more",
    "[sim][admission]") {
  // 4 a second, burst 1: t=0 passes (the bucket empties), 0.2 s has 0.8: shed, 0.25 s has
  // exactly 1.0 (0.25 x 4): passes, 0.26 s has 0.04: shed.
  const auto b = run_trace(
      "arrival_s,prompt_tokens,output_tokens", "0,3,2\n0.2,3,2\n0.25,3,2\n0.26,3,2\n",
      "{kind: continuous, max_num_seqs: 8}", "admission: {rate_limit: {rate_per_s: 4, burst: 1}}\n",
      "{kind: linear, base_ms: 10}");
  REQUIRE(b.size() == 4);
  CHECK(statuses(b) == "finished shed finished shed ");
  // queue_cap 2, one seat, 10 ms steps. t=0: r0 arrives to an empty queue (queued), r1 finds 1
  // queued (below the cap: queued), r2 finds 2 (refused). r0 is admitted at the first step,
  // so r3 at 5 ms finds r1 alone queued: queued.
  const auto q =
      run_trace("arrival_s,prompt_tokens,output_tokens", "0,3,2\n0,3,2\n0,3,2\n0.005,3,2\n",
                "{kind: continuous, max_num_seqs: 1}", "admission: {queue_cap: 2}\n",
                "{kind: linear, base_ms: 10}");
  REQUIRE(q.size() == 4);
  CHECK(statuses(q) == "finished finished rejected finished ");
  CHECK_THAT(q[2].reject_reason, Catch::Contains("admission.queue_cap: 2 requests already queued"));
}

}  // namespace t_sim_admission_edges_test
