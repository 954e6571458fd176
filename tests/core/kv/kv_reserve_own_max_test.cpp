// kv.max_output_tokens against a request's own max_output_tokens (core/kv/kv_reserve.cpp): the
// request's own maximum (a trace column) replaces the default, so a request whose output
// exceeds kv.max_output_tokens but not its own maximum is served, not refused.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace t_core_kv_kv_reserve_own_max_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("kv reserve: a request's own max_output_tokens replaces kv.max_output_tokens", "[kv]") {
  // Reserve KV of 128 tokens in blocks of 16, kv.max_output_tokens 30. r0: 10 prompt, 40 out,
  // its own maximum 50 (a footprint of 60 tokens: 64 in blocks): served in full. r1: the same
  // without its own maximum: its 40 tokens exceed 30, refused at arrival.
  const std::string path = write_temp("own_max.csv",
                                      "arrival_s,prompt_tokens,output_tokens,max_output_tokens\n"
                                      "0,10,40,50\n");
  const std::string rest =
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 4}\n"
      "kv: {policy: reserve, capacity_tokens: 128, block_size: 16, max_output_tokens: 30}\n";
  auto r = run_requests("workload: {trace: {path: " + path + "}}\n" + rest);
  REQUIRE(r.size() == 1);
  CHECK(r[0].state == RequestState::Released);
  CHECK(r[0].generated_tokens == 40);
  r = run_requests(trace_scenario("0,10,40\n", "{kind: linear, base_ms: 10}",
                                  "{kind: continuous, max_num_seqs: 4}",
                                  "{policy: reserve, capacity_tokens: 128, block_size: 16, "
                                  "max_output_tokens: 30}"));
  REQUIRE(r.size() == 1);
  CHECK(r[0].state == RequestState::Rejected);
  CHECK_THAT(r[0].reject_reason,
             Catch::Contains("its 40 output tokens exceed kv.max_output_tokens = 30"));
}

TEST_CASE(
    "kv paged: a request's own max_output_tokens sets its peak: past the capacity it is refused",
    "[kv]") {
  // Paged KV of 64 tokens in blocks of 16. r0: 10 prompt, 20 out, its own maximum 100: a peak of
  // 110 tokens, 112 in blocks, more than the whole capacity: refused at arrival though its 30
  // real tokens would fit. r1: its own maximum 40: 50 tokens, 64 in blocks: served in full.
  const std::string path = write_temp("own_max_paged.csv",
                                      "arrival_s,prompt_tokens,output_tokens,max_output_tokens\n"
                                      "0,10,20,100\n0.5,10,20,40\n");
  const auto r = run_requests("workload: {trace: {path: " + path +
                              "}}\nstep_time: {kind: linear, base_ms: 10}\n"
                              "scheduler: {kind: continuous, max_num_seqs: 4}\n"
                              "kv: {policy: paged, capacity_tokens: 64, block_size: 16}\n");
  REQUIRE(r.size() == 2);
  CHECK(r[0].state == RequestState::Rejected);
  CHECK_THAT(r[0].reject_reason,
             Catch::Contains("needs 112 KV tokens at its peak but the KV capacity is 64 tokens"));
  CHECK(r[1].state == RequestState::Released);
  CHECK(r[1].generated_tokens == 20);
}

}  // namespace t_core_kv_kv_reserve_own_max_test
