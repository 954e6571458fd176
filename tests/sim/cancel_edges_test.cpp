// Abandonment at its edges (docs/schedulers.md, admission and abandonment), worked by hand:
// cancel.fraction's draw (sim/admission.cpp, draw_cancel) with every request picked: one of 2
// output tokens has only k = 1 to draw and leaves after its first token, one of 1 token is never
// cancelled; a class's timeout of 1 ns (sim/admission_engine.cpp, watch_timeout) replaces the
// section's as any other does.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace t_sim_cancel_edges_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("cancel edges: a 2-token request is cancelled after its one token, a 1-token one never",
          "[sim][admission]") {
  // Two seats, 10 ms a step: r0 (2 tokens) and r1 (1 token) prefill together in [0, 10 ms),
  // each producing its first token. r0's cancel point is 1 of 1 .. 1: it leaves at 10 ms with 1
  // token, cancelled; r1 has its only token and finishes.
  const auto r =
      run_requests(trace_scenario("0,4,2\n0,4,1\n", "{kind: linear, base_ms: 10}",
                                  "{kind: continuous, max_num_seqs: 2}",
                                  "{policy: paged, block_size: 16, capacity_tokens: 256}") +
                   "abandonment: {cancel: {fraction: 1}}\n");
  REQUIRE(r.size() == 2);
  CHECK(r[0].spec.cancel_after_tokens == 1);
  CHECK(r[0].state == RequestState::Abandoned);
  CHECK(r[0].end_cause == EndCause::Cancelled);
  CHECK(r[0].generated_tokens == 1);
  CHECK(r[0].release.count_ns() == 10'000'000);
  CHECK(r[1].spec.cancel_after_tokens == 0);
  CHECK(r[1].state == RequestState::Released);
  CHECK(r[1].generated_tokens == 1);
}

TEST_CASE("cancel edges: a class's timeout of 1 ns replaces the section's", "[sim][admission]") {
  // One seat, 10 ms a step. b0 (class b, t=0) runs [0, 50 ms), its first token at 10 ms, in the
  // section's 35 ms. a0 (class a, timeout_s 1e-9) arrives at 1 ms and waits behind it: it leaves
  // 1 ns later, timed out (with the section's timeout it would wait until 36 ms).
  const std::string a = write_temp("a.csv", "arrival_s,prompt_tokens,output_tokens\n0.001,3,5\n");
  const std::string b = write_temp("b.csv", "arrival_s,prompt_tokens,output_tokens\n0,3,5\n");
  const auto r =
      run_requests("workload: {mix: {components: [{name: a, timeout_s: 1e-9, trace: {path: " + a +
                   "}}, {name: b, trace: {path: " + b +
                   "}}]}}\nstep_time: {kind: linear, base_ms: 10}\n"
                   "scheduler: {kind: continuous, max_num_seqs: 1}\n"
                   "kv: {policy: paged, block_size: 16, capacity_tokens: 256}\n"
                   "abandonment: {timeout_s: 0.035}\n");
  REQUIRE(r.size() == 2);
  const Request& a0 = r[0].spec.arrival.count_ns() > 0 ? r[0] : r[1];
  const Request& b0 = r[0].spec.arrival.count_ns() > 0 ? r[1] : r[0];
  CHECK(a0.state == RequestState::Abandoned);
  CHECK(a0.end_cause == EndCause::TimedOut);
  CHECK(a0.release.count_ns() == 1'000'001);
  CHECK(b0.state == RequestState::Released);
  CHECK(b0.generated_tokens == 5);
}

TEST_CASE("cancel edges: a trace's cancel_after_s of 1 ns is kept over the section's draw",
          "[sim][admission]") {
  // r0's own cancel_after_s is 1e-9 s (the least a trace gives): cancel.fraction 1 with a fixed
  // after_s of 0.5 s draws nothing for it, so it is cancelled 1 ns after arrival, in its first
  // step (its prefill, [0, 10 ms)), and leaves at that step's end without a token; r1 (none of
  // its own) is drawn 0.5 s, long after it finished.
  const std::string t = write_temp(
      "own.csv", "arrival_s,prompt_tokens,output_tokens,cancel_after_s\n0,4,5,1e-9\n0,4,5,\n");
  const auto r =
      run_requests("workload: {trace: {path: " + t +
                   "}}\nstep_time: {kind: linear, base_ms: 10}\n"
                   "scheduler: {kind: continuous, max_num_seqs: 2}\n"
                   "kv: {policy: paged, block_size: 16, capacity_tokens: 256}\n"
                   "abandonment: {cancel: {fraction: 1, after_s: {kind: fixed, value_s: 0.5}}}\n");
  REQUIRE(r.size() == 2);
  CHECK(r[0].spec.cancel_after.count_ns() == 1);
  CHECK(r[0].state == RequestState::Abandoned);
  CHECK(r[0].end_cause == EndCause::Cancelled);
  CHECK(r[0].generated_tokens == 0);
  CHECK(r[0].release.count_ns() == 10'000'000);
  CHECK(r[1].spec.cancel_after.count_ns() == 500'000'000);
  CHECK(r[1].state == RequestState::Released);
  CHECK(r[1].generated_tokens == 5);
}

}  // namespace t_sim_cancel_edges_test
