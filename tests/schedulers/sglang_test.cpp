// The sglang policy (SGLang's scheduler): golden timelines on tiny traces, every time worked out
// by hand in the comments, and its config rules.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_schedulers_sglang_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_big_kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";

}  // namespace

TEST_CASE("sglang: a prefill batch runs alone, between decode steps", "[schedulers][sglang]") {
  // r0 (t=0, prompt 10, 3 tokens), r1 (t=5 ms, prompt 4, 2 tokens).
  // t=0  prefill batch r0: 2 + 1 + 5 = 8 ms               -> t=8:  r0 token 1
  // t=8  r1 waits, so a prefill batch forms and r0 does not decode: 2 + 1 + 2 = 5 ms
  //                                                        -> t=13: r1 token 1
  // t=13 nothing waits: decode r0 and r1, 2 + 2 = 4 ms     -> t=17: r0 token 2, r1 done
  // t=17 decode r0: 3 ms                                   -> t=20: r0 done
  auto r = run_requests(trace_scenario("0,10,3\n0.005,4,2\n", k_linear,
                                       "{kind: sglang, chunked_prefill_size: -1}", k_big_kv));
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_token.count_ns() == ms(8));
  CHECK(r[1].first_token.count_ns() == ms(13));
  CHECK(r[1].finish.count_ns() == ms(17));
  CHECK(r[0].finish.count_ns() == ms(20));
}

TEST_CASE("sglang: admission counts a request's new tokens up to 4,096 (CLIP_MAX_NEW_TOKENS)",
          "[schedulers][sglang]") {
  // KV of 4,131 tokens (blocks of 1), both at t=0. r0 (prompt 16, 10 tokens) is admitted first
  // and promises 16 + 10 = 26 tokens; r1 (prompt 8, 4,100 tokens) promises 8 + min(4,100,
  // 4,096) = 4,104, under the 4,131 - 26 = 4,105 left: it joins r0's prefill batch at t=0. One
  // more token in the clip (or none) would leave it waiting.
  auto r = run_requests(trace_scenario("0,16,10\n0,8,4100\n", k_linear, "{kind: sglang}",
                                       "{policy: paged, capacity_tokens: 4131, block_size: 1}"));
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_admitted.count_ns() == 0);
  CHECK(r[1].first_admitted.count_ns() == 0);
  CHECK(r[1].first_token.count_ns() == r[0].first_token.count_ns());
  // A KV one token smaller leaves 4,104, not above r1's promise: r1 waits for r0 to finish.
  auto tight =
      run_requests(trace_scenario("0,16,10\n0,8,4100\n", k_linear, "{kind: sglang}",
                                  "{policy: paged, capacity_tokens: 4130, block_size: 1}"));
  REQUIRE(tight.size() == 2);
  CHECK(tight[1].first_admitted.count_ns() > 0);
}

TEST_CASE("sglang: a prompt whose blocks do not fit closes the batch, whatever fits behind it",
          "[schedulers][sglang]") {
  // KV of 4 blocks of 16 tokens, all at t=0. r0 (prompt 17, 2 tokens) takes 2 blocks and
  // promises 19 tokens; r1 (prompt 33, 2 tokens) promises 35, under the 64 - 19 = 45 left, but
  // its 33 tokens need 3 blocks of the 2 free: it closes the batch (first come, first served),
  // and r2 (prompt 1), which one block would hold, waits behind it. Both join after r0 leaves.
  auto r = run_requests(trace_scenario("0,17,2\n0,33,2\n0,1,2\n", k_linear, "{kind: sglang}",
                                       "{policy: paged, capacity_tokens: 64, block_size: 16}"));
  REQUIRE(r.size() == 3);
  CHECK(r[0].first_admitted.count_ns() == 0);
  CHECK(r[1].first_admitted.count_ns() > 0);
  CHECK(r[1].first_admitted >= r[0].finish);
  CHECK(r[2].first_admitted == r[1].first_admitted);
}

TEST_CASE("sglang: enable_mixed_chunk runs the prefill beside the decodes",
          "[schedulers][sglang]") {
  // The same trace. t=0 r0's prefill: 8 ms                -> t=8:  r0 token 1
  // t=8  r0 decodes and r1's prefill joins the step: 2 + 2 + 2 = 6 ms
  //                                                        -> t=14: r0 token 2, r1 token 1
  // t=14 decode both: 4 ms                                 -> t=18: both done
  auto r = run_requests(trace_scenario("0,10,3\n0.005,4,2\n", k_linear,
                                       "{kind: sglang, enable_mixed_chunk: true}", k_big_kv));
  CHECK(r[1].first_token.count_ns() == ms(14));
  CHECK(r[0].finish.count_ns() == ms(18));
  CHECK(r[1].finish.count_ns() == ms(18));
}

TEST_CASE("sglang: a long prompt is chunked and its chunk closes the batch",
          "[schedulers][sglang]") {
  // chunked_prefill_size 8, max_prefill_tokens 16. r0 (t=0, prompt 20, 1), r1 (t=0, prompt 4, 1).
  // t=0  r0's 20 exceed the chunk budget: a chunk of 8 closes the batch: 2 + 1 + 4 = 7 ms -> t=7
  // t=7  r0's next chunk, 8 of its 12 left, closes it again: 7 ms                  -> t=14
  // t=14 r0's last 4 leave a chunk budget of 4 that r1's 4 fill: 2 + 2 + 4 = 8 ms -> t=22
  auto r = run_requests(
      trace_scenario("0,20,1\n0,4,1\n", k_linear,
                     "{kind: sglang, chunked_prefill_size: 8, max_prefill_tokens: 16}", k_big_kv));
  CHECK(r[0].finish.count_ns() == ms(22));
  CHECK(r[1].first_admitted.count_ns() == ms(14));
  CHECK(r[1].finish.count_ns() == ms(22));
}

TEST_CASE("sglang: decode memory exhaustion retracts the request with the fewest tokens",
          "[schedulers][sglang]") {
  // KV 30 tokens in blocks of 1 (SGLang's page size). new_token_ratio starts at 0.5 and, with one
  // decay step, falls to its minimum 0.5 x 0.14 = 0.07 after one decode.
  // r0 (t=0, prompt 8, 10 tokens), r1 (t=7 ms, prompt 8, 10 tokens).
  // t=0  r0's prefill: 2 + 1 + 4 = 7 ms                          -> t=7: r0 token 1, holds 8
  // t=7  r1 needs 8 + 10 = 18, not less than free 22 - 0.5 x 9 (r0's tokens to come) = 17.5:
  //      r0 decodes alone, 3 ms; the ratio decays to 0.07         -> t=10: r0 token 2, holds 9
  // t=10 18 < 21 - 0.07 x 8 = 20.44: r1's prefill, 7 ms          -> t=17: r1 token 1, holds 8
  // t=17 .. t=41: both decode, 4 ms a step, each holding one more token a step:
  //      t=17 holds 10+9, t=21 11+10, t=25 12+11, t=29 13+12, t=33 14+13, t=37 15+14
  //                                                              -> t=41: r0 8 tokens, r1 7
  // t=41 r0 grows to 16 (16 + 14 = 30), r1 cannot grow to 15: r1, with the fewer output tokens,
  //      is retracted; the ratio is reset to min(1, (8 + 20) / 10) = 1. r0 alone: 3 ms -> t=44
  // t=44 r1 (a prefill of 8 + 7 = 15 now) needs 15 + 3 = 18, free 14 - 1: r0 decodes -> t=47: done
  // t=47 r1 recomputes: 2 + 1 + 7.5 = 10.5 ms -> t=57.5 (token 8); two decodes -> t=63.5: done
  const std::string sched =
      "{kind: sglang, init_new_token_ratio: 0.5, new_token_ratio_decay_steps: 1}";
  auto r = run_requests(trace_scenario("0,8,10\n0.007,8,10\n", k_linear, sched,
                                       "{policy: paged, capacity_tokens: 30, block_size: 1}"));
  CHECK(r[0].preemptions == 0);
  CHECK(r[0].finish.count_ns() == ms(47));
  CHECK(r[1].first_admitted.count_ns() == ms(10));
  CHECK(r[1].first_token.count_ns() == ms(17));
  CHECK(r[1].preemptions == 1);
  CHECK(r[1].finish.count_ns() == ms(63.5));
}

TEST_CASE("sglang: a retraction leaves every survivor retract_decode_steps tokens of room",
          "[schedulers][sglang]") {
  // KV 40 tokens in blocks of 1. new_token_ratio starts at 0.5 and, with one decay step and a
  // floor factor of 0, falls to 0 after one decode. r0 (t=0, prompt 10, 20 tokens), r1 and r2
  // (t=8 ms, prompt 5, 10 tokens each).
  // t=0    r0's prefill: 2 + 1 + 5 = 8 ms                                  -> t=8
  // t=8    r1 needs 5 + 10 = 15 < 30 free - 0.5 x 19 = 20.5: it joins; r2 would need 15 <
  //        20.5 - 15: no. 2 + 1 + 2.5 = 5.5 ms                             -> t=13.5
  // t=13.5 r2: 15 < 25 - 0.5 x (19 + 9) = 11? No: r0 and r1 decode, 4 ms; ratio 0 -> t=17.5
  // t=17.5 r2: 15 < 23: its prefill, 5.5 ms                                -> t=23
  // t=23   the three decode, 5 ms a step; at t = 23 + 5k they grow to 25 + 3k tokens
  // t=53   (k = 6; tokens made r0 8, r1 8, r2 7) r0 cannot grow: r2 (fewest tokens) is
  //        retracted, freeing 11; with retract_decode_steps 6, 11 < 2 x 6, so another goes:
  //        r0 (8 tokens like r1, the longer prompt). The ratio is reset to min(1, (8 + 6) / 10).
  //        r1 alone: 3 ms -> t=56; t=56 r0 (prefill 18, needs 18 + 12 = 30 >= 27 - 1) waits;
  //        3 ms                                                           -> t=59: r1 done
  // t=59   empty engine: the ratio is 0.5 again, r0 (queue front) joins whatever the estimate,
  //        r2 (12 + 3 = 15 >= 40 - 30) waits: 2 + 1 + 9 = 12 ms           -> t=71
  // t=71   r2: 15 < 22 - 0.5 x 11: its prefill of 5 + 7 = 12: 9 ms         -> t=80
  // t=80   r0 and r2 decode: 4 ms twice                                    -> t=88: r2 done
  // t=88   r0 decodes its last 9 tokens, 3 ms each                         -> t=115
  const std::string trace = "0,10,20\n0.008,5,10\n0.008,5,10\n";
  const std::string kv = "{policy: paged, capacity_tokens: 40, block_size: 1}";
  const auto sched = [](int steps) {
    return "{kind: sglang, init_new_token_ratio: 0.5, min_new_token_ratio_factor: 0, "
           "new_token_ratio_decay_steps: 1, retract_decode_steps: " +
           std::to_string(steps) + "}";
  };
  auto r = run_requests(trace_scenario(trace, k_linear, sched(6), kv));
  CHECK(r[2].first_admitted.count_ns() == ms(17.5));
  CHECK(r[0].preemptions == 1);
  CHECK(r[1].preemptions == 0);
  CHECK(r[2].preemptions == 1);
  CHECK(r[1].finish.count_ns() == ms(59));
  CHECK(r[2].finish.count_ns() == ms(88));
  CHECK(r[0].finish.count_ns() == ms(115));

  // retract_decode_steps 3: 11 >= 2 x 3, so r2 alone is retracted; r0 and r1 decode on, 4 ms a
  // step: t=57, t=61: r1 done.
  r = run_requests(trace_scenario(trace, k_linear, sched(3), kv));
  CHECK(r[0].preemptions == 0);
  CHECK(r[2].preemptions == 1);
  CHECK(r[1].finish.count_ns() == ms(61));
}

TEST_CASE("sglang: lpm takes the longest cached prefix first", "[schedulers][sglang]") {
  // Blocks of 16, prefix caching, one trace hash per 16 tokens; max_prefill_tokens 16 lets one
  // request into each prefill batch. r0 (t=0, prompt 32, 3 tokens, hashes 1;2), r1 (t=1 ms,
  // prompt 32, 1 token, hashes 7;8), r2 (t=1 ms, prompt 48, 1 token, hashes 1;2;3).
  // t=0  r0's prefill, 32: 2 + 1 + 16 = 19 ms                        -> t=19: r0 token 1
  // lpm: t=19 r2 hits r0's 2 blocks and computes 16: 2 + 1 + 8 = 11 -> t=30: r2 done
  //      t=30 r1: 19 ms -> t=49: done; r0 decodes 3 ms twice        -> t=55: r0 done
  // fcfs: t=19 r1: 19 ms -> t=38; t=38 r2: 11 ms -> t=49; r0         -> t=55
  const std::string path =
      write_temp("lpm.csv",
                 "arrival_s,prompt_tokens,output_tokens,prefix_hash\n0,32,3,1;2\n"
                 "0.001,32,1,7;8\n0.001,48,1,1;2;3\n");
  const auto yaml = [&](const std::string& policy) {
    return "workload: {trace: {path: " + path +
           ", hash_block_tokens: 16}}\nstep_time: " + k_linear +
           "\nscheduler: {kind: sglang, max_prefill_tokens: 16, chunked_prefill_size: "
           "-1, schedule_policy: " +
           policy +
           "}\nkv: {policy: paged, capacity_tokens: 1024, "
           "block_size: 16, prefix_caching: true}\n";
  };
  auto r = run_requests(yaml("lpm"));
  CHECK(r[2].finish.count_ns() == ms(30));
  CHECK(r[2].cached_prompt_tokens == 32);
  CHECK(r[1].finish.count_ns() == ms(49));
  CHECK(r[0].finish.count_ns() == ms(55));
  r = run_requests(yaml("fcfs"));
  CHECK(r[1].finish.count_ns() == ms(38));
  CHECK(r[2].finish.count_ns() == ms(49));
  CHECK(r[0].finish.count_ns() == ms(55));
}

TEST_CASE("sglang: bad settings are refused with the rule", "[schedulers][sglang]") {
  const auto error = [](const std::string& sched) {
    return input_error_of(trace_scenario("0,4,2\n", k_linear, sched, k_big_kv));
  };
  CHECK_THAT(error("{kind: sglang, chunked_prefill_size: 0}"),
             Catch::Contains("must be -1 (no chunking) or at least 1"));
  CHECK_THAT(error("{kind: sglang, chunked_prefill_size: -1, enable_mixed_chunk: true}"),
             Catch::Contains("needs chunked prefill"));
  CHECK_THAT(error("{kind: sglang, schedule_policy: lru}"), Catch::Contains("fcfs, lpm"));
  CHECK(error("{kind: sglang}") == "(no error)");
}

}  // namespace t_schedulers_sglang_test
