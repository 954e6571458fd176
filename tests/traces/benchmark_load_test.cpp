// Load as benchmark tools apply it: a burst of every request at one instant (arrival kind
// burst, or fixed with interval_s: 0), and a fixed number of clients (closed_loop
// max_concurrency) each sending its next request when its last reply is back, with fixed or
// dataset-drawn lengths. Times are worked by hand on a step model where every step takes 10 ms.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_traces_benchmark_load_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Every step 10 ms whatever it holds; continuous batching with room for everything, so a
// request of output k takes its prefill step (the first token) and k - 1 decode steps.
const std::string k_engine =
    "step_time: {kind: linear, base_ms: 10}\n"
    "scheduler: {kind: continuous, max_num_seqs: 64}\n"
    "kv: {policy: paged, capacity_tokens: 100000}\n";

std::string synthetic(const std::string& arrival) {
  return "workload: {synthetic: {requests: 3, arrival: " + arrival +
         ", prompt_tokens: {kind: fixed, value: 4}, output_tokens: {kind: fixed, value: 3}}}\n" +
         k_engine;
}

}  // namespace

TEST_CASE("burst: every request arrives at once and they share every step", "[traces]") {
  // All three at t = 0: one prefill step (0-10 ms) gives each its first token, two decode steps
  // finish them all at 30 ms.
  for (const std::string arrival : {"{kind: burst}", "{kind: fixed, interval_s: 0}"}) {
    const auto r = run_requests(synthetic(arrival));
    REQUIRE(r.size() == 3);
    for (const Request& q : r) {
      CHECK(q.spec.arrival.count_ns() == 0);
      CHECK(q.first_token.count_ns() == ms(10));
      CHECK(q.finish.count_ns() == ms(30));
    }
  }
}

TEST_CASE("burst: at_s puts the burst at one later instant", "[traces]") {
  // start_s 1 + at_s 2: all three arrive at 3 s, first tokens at 3.010 s, done at 3.030 s.
  const auto r = run_requests(
      "workload: {synthetic: {requests: 3, start_s: 1, arrival: {kind: burst, at_s: 2}, "
      "prompt_tokens: {kind: fixed, value: 4}, output_tokens: {kind: fixed, value: 3}}}\n" +
      k_engine);
  for (const Request& q : r) {
    CHECK(q.spec.arrival.count_ns() == ms(3000));
    CHECK(q.finish.count_ns() == ms(3030));
  }
}

TEST_CASE("max_concurrency: a client sends its next request as its last reply leaves", "[traces]") {
  // Two clients, five requests of 4 + 3 tokens. Requests 0 and 1 run 0-30 ms; when they leave at
  // 30 ms the clients send 2 and 3 (ids in departure order), which run 30-60 ms; then one client
  // sends the fifth (id 4), alone 60-90 ms. Never more than two in flight.
  const auto r = run_requests(
      "workload: {closed_loop: {max_concurrency: 2, requests: 5, "
      "prompt_tokens: {kind: fixed, value: 4}, output_tokens: {kind: fixed, value: 3}}}\n" +
      k_engine);
  REQUIRE(r.size() == 5);
  const double arrival_ms[] = {0, 0, 30, 30, 60};
  const double finish_ms[] = {30, 30, 60, 60, 90};
  for (size_t i = 0; i < 5; ++i) {
    CHECK(r[i].spec.arrival.count_ns() == ms(arrival_ms[i]));
    CHECK(r[i].finish.count_ns() == ms(finish_ms[i]));
  }
}

TEST_CASE("max_concurrency: lengths drawn in order from a dataset's rows", "[traces]") {
  // One client; rows (prompt, output) = (4, 2), (8, 3) in order. Request 0: prefill 0-10 ms, one
  // decode, done at 20 ms; request 1 arrives then, three steps, done at 50 ms.
  const std::string rows = write_temp("lengths.csv", "input,output\n4,2\n8,3\n");
  const auto r = run_requests(
      "workload: {closed_loop: {max_concurrency: 1, requests: 2, lengths_from: {path: " + rows +
      ", prompt_column: input, output_column: output, order: sequential}}}\n" + k_engine);
  REQUIRE(r.size() == 2);
  CHECK(r[0].spec.prompt_tokens == 4);
  CHECK(r[1].spec.prompt_tokens == 8);
  CHECK(r[1].spec.arrival.count_ns() == ms(20));
  CHECK(r[1].finish.count_ns() == ms(50));
}

TEST_CASE("max_concurrency: bad input names the key", "[traces]") {
  const std::string lengths =
      ", prompt_tokens: {kind: fixed, value: 4}, output_tokens: {kind: fixed, value: 3}}}\n";
  CHECK_THAT(input_error_of("workload: {closed_loop: {users: 2, max_concurrency: 2, requests: 5" +
                            lengths + k_engine),
             Catch::Contains("max_concurrency, users"));
  CHECK_THAT(input_error_of("workload: {closed_loop: {max_concurrency: 0, requests: 5" + lengths +
                            k_engine),
             Catch::Contains("max_concurrency"));
  CHECK_THAT(input_error_of("workload: {synthetic: {requests: 3, arrival: {kind: fixed, "
                            "interval_s: -1}" +
                            lengths + k_engine),
             Catch::Contains("interval_s"));
}

}  // namespace t_traces_benchmark_load_test
