// Golden timelines: tiny traces whose every time is worked out by hand in the comments.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_sim_engine_golden_test {

using namespace servesim;
using namespace servesim::test;

namespace {
// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_big_kv = "{policy: paged, capacity_tokens: 100000, block_size: 16}";
}  // namespace

TEST_CASE("continuous: an arrival at the instant a step ends joins the next step",
          "[sim][golden]") {
  // r0 (t=0, prompt 4, 3 tokens), r1 (t=5 ms, prompt 2, 2 tokens).
  // t=0   prefill r0: 2 + 1 + 0.5*4 = 5 ms           -> t=5:  r0 token 1
  // t=5   r1 arrives at the step's end and is seen: decode r0 + prefill r1:
  //       2 + 2 + 0.5*2 = 5 ms                       -> t=10: r0 token 2, r1 token 1
  // t=10  decode r0, r1: 2 + 2 = 4 ms                -> t=14: r0 token 3, r1 token 2, both done
  auto r = run_requests(trace_scenario("0,4,3\n0.005,2,2\n", k_linear,
                                       "{kind: continuous, max_num_seqs: 8}", k_big_kv));
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_token.count_ns() == ms(5));
  CHECK(r[0].finish.count_ns() == ms(14));
  CHECK(r[0].release.count_ns() == ms(14));
  CHECK(r[1].first_admitted.count_ns() == ms(5));
  CHECK(r[1].first_token.count_ns() == ms(10));
  CHECK(r[1].release.count_ns() == ms(14));
}

TEST_CASE("static: waits for a full batch, pads finished seats, releases at batch end",
          "[sim][golden]") {
  // max_batch_size 2. r0 (t=0, 4, 3), r1 (t=1 ms, 2, 1), r2 (t=2 ms, 3, 2).
  // t=1   two queued: prefill r0, r1: 2 + 2 + 0.5*6 = 7 ms -> t=8: r0 token 1, r1 done (finish 8)
  // t=8   decode r0 + padding r1: 2 + 2 = 4 ms             -> t=12: r0 token 2
  // t=12  same                                             -> t=16: r0 done; batch ends, both
  //       released at 16.
  // t=16  r2 alone, but no request will ever arrive again: prefill 2 + 1 + 1.5 = 4.5 ms
  //       -> t=20.5 token 1; decode 2 + 1 = 3 ms -> t=23.5 done, released.
  auto r = run_requests(trace_scenario("0,4,3\n0.001,2,1\n0.002,3,2\n", k_linear,
                                       "{kind: static, max_batch_size: 2}", k_big_kv));
  CHECK(r[0].first_admitted.count_ns() == ms(1));
  CHECK(r[0].first_token.count_ns() == ms(8));
  CHECK(r[0].release.count_ns() == ms(16));
  CHECK(r[1].finish.count_ns() == ms(8));
  CHECK(r[1].release.count_ns() == ms(16));
  CHECK(r[2].first_admitted.count_ns() == ms(16));
  CHECK(r[2].first_token.count_ns() == ms(20.5));
  CHECK(r[2].release.count_ns() == ms(23.5));
}

TEST_CASE("dynamic: dispatches on the oldest request's queue delay", "[sim][golden]") {
  // max_batch_size 4, max_queue_delay_ms 3.
  // r0 (0, 2, 2), r1 (1 ms, 2, 1), r2 (10 ms, 2, 1), r3 (11 ms, 2, 1), r4 (100 ms, 2, 1).
  // t=3   r0 has waited 3 ms: prefill r0, r1: 2 + 2 + 2 = 6 ms -> t=9: r1 done
  // t=9   decode r0 + padding r1: 4 ms                         -> t=13: released
  // t=13  r2 has waited exactly 3 ms: prefill r2, r3: 6 ms     -> t=19: released
  // t=100 r4 is the last request ever: dispatched at once: 2 + 1 + 1 = 4 ms -> t=104
  auto r = run_requests(
      trace_scenario("0,2,2\n0.001,2,1\n0.010,2,1\n0.011,2,1\n0.100,2,1\n", k_linear,
                     "{kind: dynamic, max_batch_size: 4, max_queue_delay_ms: 3}", k_big_kv));
  CHECK(r[0].first_admitted.count_ns() == ms(3));
  CHECK(r[1].finish.count_ns() == ms(9));
  CHECK(r[0].release.count_ns() == ms(13));
  CHECK(r[1].release.count_ns() == ms(13));
  CHECK(r[2].first_admitted.count_ns() == ms(13));
  CHECK(r[3].release.count_ns() == ms(19));
  CHECK(r[4].first_admitted.count_ns() == ms(100));
  CHECK(r[4].release.count_ns() == ms(104));
}

TEST_CASE("dynamic: a full batch goes at once without waiting for the delay", "[sim][golden]") {
  // max_batch_size 2, delay 50 ms: r0 (0), r1 (1 ms) fill the batch at t=1.
  // prefill 2 + 2 + 0.5*4 = 6 ms -> t=7 both done (one token each); r2 (t=200 ms) alone later.
  auto r = run_requests(trace_scenario("0,2,1\n0.001,2,1\n0.2,2,1\n", k_linear,
                                       "{kind: dynamic, max_batch_size: 2, max_queue_delay_ms: 50}",
                                       k_big_kv));
  CHECK(r[0].first_admitted.count_ns() == ms(1));
  CHECK(r[1].release.count_ns() == ms(7));
  CHECK(r[2].release.count_ns() == ms(204));
}

TEST_CASE("dynamic: a wake-up later than the timer already pending is left for that timer",
          "[sim][golden]") {
  // max_batch_size 2, max_queue_delay_ms 20; r0 (0), r1 (1 ms), r2 (2 ms), r3 (8 ms), each a
  // prompt of 2 and 1 token.
  // t=0  r0 waits alone: a wake-up at its deadline, 20 ms
  // t=1  r1 fills the batch: 2 + 2 + 0.5*4 = 6 ms -> t=7 both released; the timer at 20 stays
  // t=7  r2 waits alone; its deadline, 22 ms, is after the pending timer, which is left to
  //      plan again (and ask for 22 then if r2 still waits): no timer at 22
  // t=8  r3 fills the batch: 6 ms -> t=14 both released
  // t=20 the timer: nothing waits, nothing more is asked.
  // Every request is served at 14 ms, so a run bounded at 15 ms or 21 ms is complete, not
  // partial: the timer left at 20 ms waits for nothing (it once made a run bounded at 15 ms
  // report "simulated time limit" with all four requests finished).
  const double bound_ms = GENERATE(15.0, 21.0);
  Scenario sc = build_scenario(doc_of(
      trace_scenario("0,2,1\n0.001,2,1\n0.002,2,1\n0.008,2,1\n", k_linear,
                     "{kind: dynamic, max_batch_size: 2, max_queue_delay_ms: 20}", k_big_kv)));
  RunLimits limits;
  limits.max_sim_time = Time::from_ms(bound_ms);
  Simulation sim(std::move(sc.components), /*check=*/true, limits);
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  CHECK(sim.stats().stopped_by == "");
  const auto r = rec.by_id();
  REQUIRE(r.size() == 4);
  for (const Request& q : r) CHECK(q.state == RequestState::Released);
  CHECK(r[1].release.count_ns() == ms(7));
  CHECK(r[2].first_admitted.count_ns() == ms(8));
  CHECK(r[3].release.count_ns() == ms(14));
}

TEST_CASE("limits: a run stopped by its time bound with requests in flight is partial",
          "[sim][golden]") {
  // The same four requests bounded at 10 ms: r2 and r3 are still in flight.
  Scenario sc = build_scenario(doc_of(
      trace_scenario("0,2,1\n0.001,2,1\n0.002,2,1\n0.008,2,1\n", k_linear,
                     "{kind: dynamic, max_batch_size: 2, max_queue_delay_ms: 20}", k_big_kv)));
  RunLimits limits;
  limits.max_sim_time = Time::from_ms(10);
  Simulation sim(std::move(sc.components), /*check=*/true, limits);
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  CHECK(sim.stats().stopped_by == "simulated time limit");
  const auto r = rec.by_id();
  REQUIRE(r.size() == 4);
  CHECK(r[1].state == RequestState::Released);
  CHECK(r[3].state != RequestState::Released);
}

TEST_CASE("continuous: paged KV preempts the newest request by recompute", "[sim][golden][kv]") {
  // Every step 1 ms. KV: 4 blocks of 2 tokens. r0, r1 both (t=0, prompt 3, 4 tokens): each
  // peaks at 3 + 4 - 1 = 6 tokens = 3 blocks, so both fit alone but not together.
  // t=0 admit r0 (2 blocks), r1 (2 blocks)             -> t=1: both token 1, context 3
  // t=1 decode both (context 4 still fits 2 blocks)    -> t=2: both token 2, context 4
  // t=2 r0 needs a 3rd block, none free: r1 (newest) is preempted by recompute, its 2 blocks go
  //     to r0; nothing new is admitted in this step    -> t=3: r0 token 3
  // t=3 r0 decodes; r1 would need 5 tokens = 3 blocks, 1 free: waits -> t=4: r0 done, released
  // t=4 r1 recomputes prompt + 2 generated = 5 tokens  -> t=5: r1 token 3
  // t=5 decode r1                                      -> t=6: r1 token 4, released
  auto r = run_requests(trace_scenario("0,3,4\n0,3,4\n", "{kind: linear, base_ms: 1}",
                                       "{kind: continuous, max_num_seqs: 8}",
                                       "{policy: paged, capacity_tokens: 8, block_size: 2}"));
  CHECK(r[0].release.count_ns() == ms(4));
  CHECK(r[0].preemptions == 0);
  CHECK(r[1].preemptions == 1);
  CHECK(r[1].first_token.count_ns() == ms(1));
  CHECK(r[1].first_admitted.count_ns() == 0);
  CHECK(r[1].release.count_ns() == ms(6));
}

TEST_CASE("continuous: reserve KV admits only when prompt plus output fits", "[sim][golden][kv]") {
  // Same trace, reserve policy with 8 tokens (block 1): r0 reserves 3 + 4 = 7, r1 waits.
  // r0: prefill t=0->1, decodes ->2, ->3, ->4 (done, releases 7 tokens)
  // r1: admitted t=4, token 1 at 5, done at 8.
  auto r = run_requests(trace_scenario("0,3,4\n0,3,4\n", "{kind: linear, base_ms: 1}",
                                       "{kind: continuous, max_num_seqs: 8}",
                                       "{policy: reserve, capacity_tokens: 8, block_size: 1}"));
  CHECK(r[0].release.count_ns() == ms(4));
  CHECK(r[1].first_admitted.count_ns() == ms(4));
  CHECK(r[1].first_token.count_ns() == ms(5));
  CHECK(r[1].release.count_ns() == ms(8));
  CHECK(r[1].preemptions == 0);
}

TEST_CASE("continuous: chunked prefill splits a long prompt across steps", "[sim][golden]") {
  // step_ms = 1 + prefill tokens; budget 4 tokens a step.
  // r0 (0, prompt 10, 2 tokens), r1 (0, prompt 2, 1 token).
  // t=0  r0 chunk 4 (budget spent)                 -> t=5,  r0 context 4
  // t=5  r0 chunk 4                                -> t=10, context 8
  // t=10 r0 last chunk 2, then r1's whole prompt 2 -> t=15: r0 token 1, r1 token 1 (done)
  // t=15 decode r0: 1 ms                           -> t=16: r0 done
  auto r = run_requests(trace_scenario(
      "0,10,2\n0,2,1\n", "{kind: linear, base_ms: 1, per_prefill_token_ms: 1}",
      "{kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 4, chunked_prefill: true}",
      k_big_kv));
  CHECK(r[0].first_token.count_ns() == ms(15));
  CHECK(r[0].release.count_ns() == ms(16));
  CHECK(r[1].first_admitted.count_ns() == ms(10));
  CHECK(r[1].release.count_ns() == ms(15));
}

TEST_CASE("continuous: requests that can never be served are rejected with a reason",
          "[sim][golden]") {
  // Without chunked prefill a 10-token prompt can never fit a 4-token step; a request whose
  // peak (prompt 20 + 10 - 1 = 29 tokens) exceeds 16 tokens of KV can never fit memory.
  auto r =
      run_requests(trace_scenario("0,10,2\n0,2,1\n0,20,10\n", "{kind: linear, base_ms: 1}",
                                  "{kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 4}",
                                  "{policy: paged, capacity_tokens: 16, block_size: 2}"));
  CHECK(r[0].state == RequestState::Rejected);
  CHECK_THAT(r[0].reject_reason, Catch::Contains("max_num_batched_tokens = 4"));
  CHECK(r[1].state == RequestState::Released);
  CHECK(r[2].state == RequestState::Rejected);
  CHECK_THAT(r[2].reject_reason, Catch::Contains("KV capacity is 16 tokens"));
}

TEST_CASE("table: one sequence at 6.3 ms and eight at 9.3 ms give 159 and 860 tokens/s",
          "[sim][golden]") {
  // One request of 101 tokens alone: 1 prefill + 100 decode steps of 6.3 ms each.
  const std::string table = "{kind: table, points: [{batch: 1, ms: 6.3}, {batch: 8, ms: 9.3}]}";
  auto one = run_requests(
      trace_scenario("0,16,101\n", table, "{kind: continuous, max_num_seqs: 8}", k_big_kv));
  CHECK(one[0].release.count_ns() == 101 * ms(6.3));
  // Eight identical requests together: every step holds 8 sequences, 9.3 ms each.
  std::string rows;
  for (int i = 0; i < 8; ++i) rows += "0,16,101\n";
  auto eight =
      run_requests(trace_scenario(rows, table, "{kind: continuous, max_num_seqs: 8}", k_big_kv));
  CHECK(eight[7].release.count_ns() == 101 * ms(9.3));
  CHECK(1000.0 / 6.3 == Approx(158.7).epsilon(0.001));
  CHECK(8 * 101 / (101 * 9.3e-3) == Approx(860.2).epsilon(0.001));
}

}  // namespace t_sim_engine_golden_test
