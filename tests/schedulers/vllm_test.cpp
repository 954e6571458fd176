// The vllm policy (vLLM 0.19's V1 scheduler): golden timelines on tiny traces, every time worked
// out by hand in the comments, and the config rules that tie it to the kv section.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_schedulers_vllm_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";

std::string vllm(const std::string& extra) {
  return "{kind: vllm, enable_prefix_caching: false" + extra + "}";
}

/// Four blocks of 16 tokens, no prefix caching.
const std::string k_small_kv = "{policy: paged, capacity_tokens: 64, block_size: 16}";

std::string config_error(const std::string& scheduler, const std::string& kv) {
  try {
    (void)build_scenario(doc_of(trace_scenario("0,4,2\n", k_linear, scheduler, kv)));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("vllm: decodes and a prefill chunk share one token budget", "[schedulers][vllm]") {
  // Budget 8. r0 (t=0, prompt 6, 4 tokens), r1 (t=0, prompt 20, 2 tokens).
  // t=0    r0 joins with its whole prompt (6), r1 with a first chunk of the 2 left:
  //        2 + 2 + 0.5*8 = 8 ms                      -> t=8:    r0 token 1, r1 holds 2
  // t=8    r0 decode (1) + r1 chunk 7: 2 + 2 + 3.5   -> t=15.5: r0 token 2, r1 holds 9
  // t=15.5 the same                                  -> t=23:   r0 token 3, r1 holds 16
  // t=23   r0 decode + r1's last 4: 2 + 2 + 2 = 6 ms -> t=29:   r0 done, r1 token 1
  // t=29   r1 decode: 3 ms                           -> t=32:   r1 done
  auto r = run_requests(trace_scenario("0,6,4\n0,20,2\n", k_linear,
                                       vllm(", max_num_seqs: 4, max_num_batched_tokens: 8"),
                                       "{policy: paged, capacity_tokens: 1024, block_size: 16}"));
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_token.count_ns() == ms(8));
  CHECK(r[0].finish.count_ns() == ms(29));
  CHECK(r[0].release.count_ns() == ms(29));
  CHECK(r[1].first_admitted.count_ns() == 0);
  CHECK(r[1].first_token.count_ns() == ms(29));
  CHECK(r[1].finish.count_ns() == ms(32));
}

TEST_CASE("vllm: a waiting request joins only when its whole prompt fits in free KV",
          "[schedulers][vllm]") {
  // 4 blocks of 16, budget 16. r0 (t=0, prompt 40, 2 tokens), r1 (t=0, prompt 30, 1 token).
  // t=0  r0's 40 tokens need 3 blocks, 4 are free: it joins with a chunk of 16 (1 block);
  //      budget spent: 2 + 1 + 8 = 11 ms                    -> t=11: r0 holds 16 (1 block)
  // t=11 r0 chunk 16 (2 blocks): 11 ms                      -> t=22: r0 holds 32
  // t=22 r0's last 8 (3 blocks); budget 8 left, but r1's 30 tokens need 2 blocks and 1 is
  //      free: r1 waits. 2 + 1 + 4 = 7 ms                   -> t=29: r0 token 1
  // t=29 r0 decode (41 tokens still in 3 blocks): 3 ms      -> t=32: r0 done, released
  // t=32 r1 joins, chunk 16: 11 ms                          -> t=43
  // t=43 r1's last 14: 2 + 1 + 7 = 10 ms                    -> t=53: r1 token 1, done
  const std::string trace = "0,40,2\n0,30,1\n";
  const std::string sched = ", max_num_seqs: 4, max_num_batched_tokens: 16";
  auto r = run_requests(trace_scenario(trace, k_linear, vllm(sched), k_small_kv));
  CHECK(r[0].finish.count_ns() == ms(32));
  CHECK(r[1].first_admitted.count_ns() == ms(32));
  CHECK(r[1].first_token.count_ns() == ms(53));
  CHECK(r[1].preemptions == 0);

  // scheduler_reserve_full_isl: false admits on the first chunk alone, and no request joins in
  // a step that preempted:
  // t=22 r0's last 8 (3 blocks) + r1's first 8 (the 4th block): 2 + 2 + 8 = 12 -> t=34
  // t=34 r0 decode fits; r1's chunk of 15 needs a 2nd block, none is free: r1, the newest, is
  //      preempted. Its first chunk would fit again, but the step preempted, so nothing joins:
  //      r0 alone, 3 ms                                     -> t=37: r0 done, released
  // t=37 r1 again from its start, chunk 16: 11 ms           -> t=48
  // t=48 its last 14: 10 ms                                 -> t=58: r1 token 1, done
  r = run_requests(trace_scenario(trace, k_linear,
                                  vllm(sched + ", scheduler_reserve_full_isl: false"), k_small_kv));
  CHECK(r[0].finish.count_ns() == ms(37));
  CHECK(r[1].first_admitted.count_ns() == ms(22));
  CHECK(r[1].preemptions == 1);
  CHECK(r[1].first_token.count_ns() == ms(58));
}

TEST_CASE("vllm: a head of the queue that does not fit blocks the requests behind it",
          "[schedulers][vllm]") {
  // 4 blocks of 16, budget 32. r0 (t=0, prompt 40, 3 tokens), r1 (t=1 ms, prompt 40, 1),
  // r2 (t=1 ms, prompt 8, 1).
  // t=0  r0 joins, chunk 32 (2 blocks): 2 + 1 + 16 = 19 ms  -> t=19
  // t=19 r0's last 8 (3 blocks); r1 needs 3 blocks, 1 is free: r1 waits, and r2 (1 block, which
  //      would fit) waits behind it. 2 + 1 + 4 = 7 ms       -> t=26: r0 token 1
  // t=26 decode 3 ms -> t=29: token 2; t=29 decode 3 ms     -> t=32: r0 done, released
  // t=32 r1 joins, chunk 32, the whole budget: 19 ms        -> t=51
  // t=51 r1's last 8 (3 blocks) + r2's 8 (the 4th): 2 + 2 + 8 = 12 ms -> t=63: both done
  auto r = run_requests(trace_scenario("0,40,3\n0.001,40,1\n0.001,8,1\n", k_linear,
                                       vllm(", max_num_seqs: 4, max_num_batched_tokens: 32"),
                                       k_small_kv));
  CHECK(r[0].release.count_ns() == ms(32));
  CHECK(r[1].first_admitted.count_ns() == ms(32));
  CHECK(r[1].finish.count_ns() == ms(63));
  CHECK(r[2].first_admitted.count_ns() == ms(51));
  CHECK(r[2].finish.count_ns() == ms(63));
}

TEST_CASE("vllm: the whole-prompt check counts cached blocks another request holds",
          "[schedulers][vllm]") {
  // 5 blocks of 16, budget 64, prefix caching; one trace hash per 16 tokens.
  // r0 (t=0, prompt 32, 3 tokens, hashes 1;2), r1 (t=1 ms, prompt 48, 1 token, hashes 1;2;3).
  // t=0  r0 prefills 32 (2 blocks, both cached as they fill): 2 + 1 + 16 = 19 ms -> t=19
  // t=19 r0 decode takes a 3rd block; 2 are free. r1's 48 tokens are 3 blocks, but its first
  //      2 are r0's (held, so not taken from the free ones): it needs 1 and joins, computing
  //      16: 2 + 2 + 8 = 12 ms                              -> t=31: r0 token 2, r1 done
  // t=31 r0 decode: 3 ms                                    -> t=34: r0 done
  const std::string path =
      write_temp("hashed.csv",
                 "arrival_s,prompt_tokens,output_tokens,prefix_hash\n0,32,3,1;2\n"
                 "0.001,48,1,1;2;3\n");
  const std::string yaml = "workload: {trace: {path: " + path +
                           ", hash_block_tokens: 16}}\n"
                           "step_time: " +
                           k_linear +
                           "\n"
                           "scheduler: {kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 64}\n"
                           "kv: {policy: paged, capacity_tokens: 80, block_size: 16, "
                           "prefix_caching: true}\n";
  auto r = run_requests(yaml);
  CHECK(r[1].first_admitted.count_ns() == ms(19));
  CHECK(r[1].cached_prompt_tokens == 32);
  CHECK(r[1].finish.count_ns() == ms(31));
  CHECK(r[0].finish.count_ns() == ms(34));
}

TEST_CASE("vllm: long_prefill_token_threshold caps every chunk", "[schedulers][vllm]") {
  // Budget 16, threshold 4. r0 (t=0, prompt 10, 1 token), r1 (t=0, prompt 3, 2 tokens).
  // t=0  r0 chunk 4, r1 its 3: 2 + 2 + 3.5 = 7.5 ms       -> t=7.5:  r1 token 1
  // t=7.5 r0 chunk 4 + r1 decode: 2 + 2 + 2 = 6 ms        -> t=13.5: r1 done
  // t=13.5 r0's last 2: 2 + 1 + 1 = 4 ms                  -> t=17.5: r0 done
  auto r = run_requests(trace_scenario(
      "0,10,1\n0,3,2\n", k_linear,
      vllm(", max_num_seqs: 4, max_num_batched_tokens: 16, long_prefill_token_threshold: 4"),
      "{policy: paged, capacity_tokens: 1024, block_size: 16}"));
  CHECK(r[1].finish.count_ns() == ms(13.5));
  CHECK(r[0].finish.count_ns() == ms(17.5));
}

TEST_CASE("vllm: with every request at priority 0, priority schedules as fcfs",
          "[schedulers][vllm]") {
  // Requests are admitted in arrival order and the preempted go back to the queue's front, so
  // the running list stays in arrival order: the newest admission is the latest arrival.
  const std::string kv = "{policy: paged, capacity_tokens: 640, block_size: 16}";
  const std::string base =
      "workload: {synthetic: {requests: 120, arrival: {kind: poisson, rate_per_s: 60},\n"
      "  prompt_tokens: {kind: lognormal, median: 60, sigma: 0.8, max: 300},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 150}}}\n"
      "step_time: " +
      k_linear + "\nkv: " + kv + "\nscheduler: ";
  const std::string sched =
      ", max_num_seqs: 8, max_num_batched_tokens: 64, "
      "scheduler_reserve_full_isl: false";
  const RunOutput fcfs = run_scenario(doc_of(base + vllm(sched)), true);
  const RunOutput prio =
      run_scenario(doc_of(base + vllm(sched + ", scheduling_policy: priority")), true);
  CHECK(fcfs.summary.preemptions > 0);
  CHECK(fcfs.requests_csv == prio.requests_csv);
  // Every request at the same instant: the tie goes to the trace order, so the victim is still
  // the newest admission (the highest id), not the oldest.
  const std::string burst =
      std::string(base).replace(base.find("{kind: poisson, rate_per_s: 60}"), 31, "{kind: burst}");
  const RunOutput fcfs0 = run_scenario(doc_of(burst + vllm(sched)), true);
  const RunOutput prio0 =
      run_scenario(doc_of(burst + vllm(sched + ", scheduling_policy: priority")), true);
  CHECK(fcfs0.summary.preemptions > 0);
  CHECK(fcfs0.requests_csv == prio0.requests_csv);
}

TEST_CASE("vllm: the kv section must be paged and agree on prefix caching", "[schedulers][vllm]") {
  CHECK_THAT(
      config_error("{kind: vllm}", "{policy: reserve, capacity_tokens: 100}"),
      Catch::Contains("vllm needs kv.policy: paged (vLLM's KV cache is paged), not reserve"));
  CHECK_THAT(config_error("{kind: vllm}", "{policy: paged, capacity_tokens: 100}"),
             Catch::Contains("scheduler.enable_prefix_caching in scheduler at test.yaml:3:12: is "
                             "true (vLLM's default) but kv.prefix_caching is not"));
  CHECK_THAT(config_error("{kind: vllm, enable_prefix_caching: false}",
                          "{policy: paged, capacity_tokens: 100, prefix_caching: true}"),
             Catch::Contains("is false but kv.prefix_caching is true: the two must agree"));
  CHECK_THAT(config_error("{kind: vllm, max_num_seqs: 4096}",
                          "{policy: paged, capacity_tokens: 100, prefix_caching: true}"),
             Catch::Contains("scheduler.max_num_batched_tokens in scheduler at test.yaml:3:12: "
                             "must be at least max_num_seqs (4096), as vLLM requires"));
  CHECK(config_error("{kind: vllm}",
                     "{policy: paged, capacity_tokens: 100, prefix_caching: true}") == "no error");
}

TEST_CASE("vllm: async_scheduling plans a step while the previous one runs", "[schedulers][vllm]") {
  const std::string kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";
  // r0 (t=0, prompt 4, 3 tokens), r1 (t=1 ms, prompt 2, 1 token); budget 64, 4 seats.
  // Synchronous (the default):
  // t=0  idle engine: r0's prompt, 2 + 1 + 2 = 5 ms        -> t=5:  r0 token 1
  // t=5  r0 decode + r1 (arrived at 1 ms) prompt: 2+2+1 = 5 -> t=10: r0 token 2, r1 done
  // t=10 r0 decode: 3 ms                                    -> t=13: r0 done
  // Asynchronous: the step starting at t=5 was planned when the one before started (t=0), before
  // r1 arrived, so r1 joins the step after:
  // t=0  the same                                           -> t=5:  r0 token 1
  // t=5  r0 decode alone: 3 ms                              -> t=8:  r0 token 2
  // t=8  planned at t=5, r1 seen: r0 decode + r1: 5 ms      -> t=13: r0 done, r1 done
  const std::string trace = "0,4,3\n0.001,2,1\n";
  const std::string sched = ", max_num_seqs: 4, max_num_batched_tokens: 64";
  auto sync = run_requests(trace_scenario(trace, k_linear, vllm(sched), kv));
  CHECK(sync[1].first_token.count_ns() == ms(10));
  CHECK(sync[0].finish.count_ns() == ms(13));
  auto async =
      run_requests(trace_scenario(trace, k_linear, vllm(sched + ", async_scheduling: true"), kv));
  CHECK(async[0].first_token.count_ns() == ms(5));
  CHECK(async[1].first_admitted.count_ns() == ms(8));
  CHECK(async[1].first_token.count_ns() == ms(13));
  CHECK(async[0].finish.count_ns() == ms(13));

  // A finished request keeps its seat for one more plan. 2 seats; r0 (prompt 4, 2 tokens),
  // r2 (prompt 4, 4 tokens), r1 (prompt 2, 1 token), all at t=0, in that order.
  // Synchronous:
  // t=0  r0 + r2 prompts: 2 + 2 + 4 = 8 ms                  -> t=8
  // t=8  two decodes: 4 ms                                  -> t=12: r0 done, its seat free
  // t=12 r2 decode + r1 prompt: 2 + 2 + 1 = 5 ms            -> t=17: r1 done
  // t=17 r2 decode: 3 ms                                    -> t=20: r2 done
  // Asynchronous: the step at t=12 was planned at t=8, while r0 still held its seat:
  // t=12 r2 decode alone: 3 ms                              -> t=15
  // t=15 r2 decode + r1 prompt: 5 ms                        -> t=20: r1 and r2 done
  const std::string trace2 = "0,4,2\n0,4,4\n0,2,1\n";
  const std::string sched2 = ", max_num_seqs: 2, max_num_batched_tokens: 64";
  auto sync2 = run_requests(trace_scenario(trace2, k_linear, vllm(sched2), kv));
  CHECK(sync2[2].first_token.count_ns() == ms(17));
  CHECK(sync2[1].finish.count_ns() == ms(20));
  auto async2 =
      run_requests(trace_scenario(trace2, k_linear, vllm(sched2 + ", async_scheduling: true"), kv));
  CHECK(async2[0].finish.count_ns() == ms(12));
  CHECK(async2[2].first_admitted.count_ns() == ms(15));
  CHECK(async2[2].first_token.count_ns() == ms(20));
  CHECK(async2[1].finish.count_ns() == ms(20));

  // With one seat nothing else runs while r0 finishes: the plan made during its last step is
  // empty, so vLLM plans again once that step's outputs are in, as the synchronous engine does.
  // t=0 r0's prompt: 5 ms; t=5 r0 decode: 3 ms -> t=8 r0 done; t=8 r1: 2 + 1 + 1 = 4 -> t=12.
  const std::string trace3 = "0,4,2\n0,2,1\n";
  auto async3 = run_requests(trace_scenario(
      trace3, k_linear,
      vllm(", max_num_seqs: 1, max_num_batched_tokens: 64, async_scheduling: true"), kv));
  CHECK(async3[1].first_admitted.count_ns() == ms(8));
  CHECK(async3[1].first_token.count_ns() == ms(12));
}

// ---- V0 (version before 0.8) and multi-step scheduling ----------------------------------------

TEST_CASE("vllm V0: a step that admits runs prefills only, the decodes wait",
          "[schedulers][vllm]") {
  // Budget 16. r0 (t=0, prompt 4, 3 tokens), r1 (t=1 ms, prompt 2, 1 token).
  // t=0  r0 prefills its 4: 2 + 1 + 2 = 5 ms                -> t=5:  r0 token 1
  // t=5  r1 waits: a prefill-only step of r1 (r0 does not decode): 2 + 1 + 1 = 4 ms
  //                                                          -> t=9:  r1 done
  // t=9  r0 decodes: 3 ms -> t=12 token 2; 3 ms             -> t=15: r0 done
  // (V1 runs r0's decode beside r1's prefill at t=5 and has r1's token at 10 ms.)
  const std::string sched =
      vllm(", version: \"0.6.6\", max_num_seqs: 4, max_num_batched_tokens: 16");
  auto r = run_requests(trace_scenario("0,4,3\n0.001,2,1\n", k_linear, sched,
                                       "{policy: paged, capacity_tokens: 1024, block_size: 16}"));
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_token.count_ns() == ms(5));
  CHECK(r[1].first_admitted.count_ns() == ms(5));
  CHECK(r[1].first_token.count_ns() == ms(9));
  CHECK(r[1].release.count_ns() == ms(9));
  CHECK(r[0].finish.count_ns() == ms(15));
  CHECK(r[0].release.count_ns() == ms(15));
}

TEST_CASE("vllm V0: without chunked prefill a prompt longer than the budget is rejected",
          "[schedulers][vllm]") {
  const std::string sched =
      vllm(", version: \"0.6.6\", max_num_seqs: 4, max_num_batched_tokens: 8");
  auto r = run_requests(trace_scenario("0,9,1\n0,8,1\n", k_linear, sched,
                                       "{policy: paged, capacity_tokens: 1024, block_size: 16}"));
  REQUIRE(r.size() == 2);
  CHECK(r[0].state == RequestState::Rejected);
  CHECK_THAT(r[0].reject_reason, Catch::Contains("exceeds max_num_batched_tokens 8"));
  // r1's 8 fit: 2 + 1 + 4 = 7 ms.
  CHECK(r[1].first_token.count_ns() == ms(7));
}

TEST_CASE("vllm V0 chunked: decodes first, then prefill chunks, the whole prompt's KV at once",
          "[schedulers][vllm]") {
  // Budget 8, 4 blocks of 16. r0 (t=0, prompt 6, 3 tokens), r1 (t=0, prompt 20, 1 token),
  // r2 (t=0, prompt 20, 1 token).
  // t=0    r0 joins with 6 (1 block), r1 with a chunk of 2 but KV for its whole 20 (2 blocks);
  //        r2 needs 2 blocks, 1 is free: it waits. 2 + 2 + 0.5*8 = 8 ms -> t=8: r0 token 1
  // t=8    r0 decode first, then r1's chunk of 7: 2 + 2 + 3.5 = 7.5     -> t=15.5: r0 token 2
  // t=15.5 the same                                                     -> t=23:   r0 done
  // t=23   r1's last 4: 2 + 1 + 2 = 5 ms; r2 still waits (r0's block is free, r1 holds 2, so 2
  //        are free: r2 joins with the 4 left of the budget): 2 + 2 + 0.5*8 = 8 -> t=31
  //        r1 done; r2 holds 4
  // t=31   r2's next 8: 2 + 1 + 4 = 7 -> t=38; its last 8: 7 ms          -> t=45: r2 done
  const std::string sched = vllm(
      ", version: \"0.6.6\", enable_chunked_prefill: true, max_num_seqs: 4, "
      "max_num_batched_tokens: 8");
  auto r = run_requests(trace_scenario("0,6,3\n0,20,1\n0,20,1\n", k_linear, sched, k_small_kv));
  REQUIRE(r.size() == 3);
  CHECK(r[0].first_token.count_ns() == ms(8));
  CHECK(r[0].finish.count_ns() == ms(23));
  CHECK(r[1].first_token.count_ns() == ms(31));
  CHECK(r[2].first_admitted.count_ns() == ms(23));
  CHECK(r[2].first_token.count_ns() == ms(45));
}

TEST_CASE("vllm V0 multi-step: a decode group of num_scheduler_steps runs to its end",
          "[schedulers][vllm]") {
  // num_scheduler_steps 4, budget 16. r0 (t=0, prompt 4, 3 tokens), r1 (t=1 ms, prompt 2, 1),
  // r2 (t=10 ms, prompt 2, 1).
  // t=0  r0 prefills (one step; prefills are never grouped): 5 ms  -> t=5:  r0 token 1
  // t=5  r1's prefill-only step: 4 ms                              -> t=9:  r1 done
  // t=9  a group of 4 decode steps of r0, 3 ms each: tokens 2 and 3 at 12 and 15 (r0 is done),
  //      then two steps with r0's seat padded: the group ends at 21, when r0's tokens reach
  //      the client and it is released. r2, arrived at 10, waits for the group's end.
  // t=21 r2 prefills: 2 + 1 + 1 = 4 ms                             -> t=25: r2 done
  const std::string sched = vllm(
      ", version: \"0.6.6\", num_scheduler_steps: 4, max_num_seqs: 4, max_num_batched_tokens: 16");
  auto r = run_requests(trace_scenario("0,4,3\n0.001,2,1\n0.010,2,1\n", k_linear, sched,
                                       "{policy: paged, capacity_tokens: 1024, block_size: 16}"));
  REQUIRE(r.size() == 3);
  CHECK(r[0].first_token.count_ns() == ms(5));
  CHECK(r[0].finish.count_ns() == ms(15));
  CHECK(r[0].last_token.count_ns() == ms(21));
  CHECK(r[0].release.count_ns() == ms(21));
  CHECK(r[1].release.count_ns() == ms(9));
  CHECK(r[2].first_admitted.count_ns() == ms(21));
  CHECK(r[2].first_token.count_ns() == ms(25));
}

TEST_CASE("vllm V0 multi-step: each sequence of a group is given KV for the group's tokens",
          "[schedulers][vllm]") {
  // num_scheduler_steps 4, budget 64, 2 blocks of 16. r0 (t=0, prompt 13, 4 tokens: at most 16
  // KV tokens, 1 block), r1 (t=0, prompt 13, 9 tokens: 21, 2 blocks).
  // t=0  both prefill (1 block each, none free): 2 + 2 + 0.5*26 = 17 ms -> t=17: token 1 each
  // t=17 a decode group: r0 needs KV for min(13 + 4, 16) = 16 tokens, its 1 block; r1 for
  //      min(13 + 4, 21) = 17, a 2nd block, none free: r1, the newest, is preempted (token by
  //      token it would have fit until its 17th). r0 alone, 3 ms a step: tokens 2-4 at 20, 23,
  //      26 (done), a padded step -> the group ends at 29, r0 released.
  // t=29 r1 recomputes 13 + 1 = 14 tokens: 2 + 1 + 7 = 10 ms -> t=39: token 2
  // t=39 a group with KV for 18 (2 blocks): tokens 3-6 at 42, 45, 48, 51
  // t=51 a group with KV for min(22, 21): tokens 7-9 at 54, 57, 60 (done), padding -> t=63
  const std::string sched = vllm(
      ", version: \"0.6.6\", num_scheduler_steps: 4, max_num_seqs: 4, max_num_batched_tokens: 64");
  auto r = run_requests(trace_scenario("0,13,4\n0,13,9\n", k_linear, sched,
                                       "{policy: paged, capacity_tokens: 32, block_size: 16}"));
  REQUIRE(r.size() == 2);
  CHECK(r[0].preemptions == 0);
  CHECK(r[0].finish.count_ns() == ms(26));
  CHECK(r[0].release.count_ns() == ms(29));
  CHECK(r[1].preemptions == 1);
  CHECK(r[1].first_token.count_ns() == ms(17));
  CHECK(r[1].finish.count_ns() == ms(60));
  CHECK(r[1].release.count_ns() == ms(63));
}

TEST_CASE("vllm V0 chunked: a running prefill takes the last token of the budget",
          "[schedulers][vllm]") {
  // Every step 10 ms, budget 4. r0, r1, r2 (t=0, prompt 1, 10 tokens) and r3 (t=0, prompt 8,
  // 1 token). t=0: r0-r2 join with their prompts, r3 with a chunk of the 1 token left. Each
  // later step: three decodes, then r3's next chunk of 1 (the budget's last token), so r3's
  // prefill is done in its 8th step: its token at 80 ms. r0-r2 finish at 100 ms.
  const std::string sched = vllm(
      ", version: \"0.6.6\", enable_chunked_prefill: true, max_num_seqs: 4, "
      "max_num_batched_tokens: 4");
  auto r =
      run_requests(trace_scenario("0,1,10\n0,1,10\n0,1,10\n0,8,1\n", "{kind: linear, base_ms: 10}",
                                  sched, "{policy: paged, capacity_tokens: 1024, block_size: 16}"));
  REQUIRE(r.size() == 4);
  CHECK(r[3].first_token.count_ns() == ms(80));
  for (int i = 0; i < 3; ++i) CHECK(r[static_cast<size_t>(i)].finish.count_ns() == ms(100));
}

TEST_CASE("vllm: each version's keys are refused where the version lacks them",
          "[schedulers][vllm]") {
  const std::string kv = "{policy: paged, capacity_tokens: 64, block_size: 16}";
  CHECK_THAT(config_error(vllm(", num_scheduler_steps: 8"), kv),
             Catch::Contains("(V1) has no multi-step scheduling") &&
                 Catch::Contains("versions 0.6 and 0.7"));
  CHECK_THAT(config_error(vllm(", version: \"0.5.4\", num_scheduler_steps: 8"), kv),
             Catch::Contains("came with vLLM 0.6.0"));
  CHECK_THAT(config_error(vllm(", version: \"0.6.6\", num_scheduler_steps: 8, "
                               "enable_chunked_prefill: true"),
                          kv),
             Catch::Contains("not modelled"));
  CHECK_THAT(config_error(vllm(", version: \"0.6.6\", long_prefill_token_threshold: 8"), kv),
             Catch::Contains("V1 (version 0.8 and later)"));
  CHECK_THAT(config_error(vllm(", enable_chunked_prefill: false"), kv),
             Catch::Contains("prefill-only steps are V0's"));
  CHECK(config_error(vllm(", version: \"0.6.6\", num_scheduler_steps: 8"), kv) == "no error");
  // One step is no multi-step: it goes with chunked prefill. The steps range ends at 1,024.
  CHECK(config_error(vllm(", version: \"0.6.6\", num_scheduler_steps: 1, "
                          "enable_chunked_prefill: true"),
                     kv) == "no error");
  CHECK(config_error(vllm(", version: \"0.6.6\", num_scheduler_steps: 1024"), kv) == "no error");
  CHECK_THAT(config_error(vllm(", version: \"0.6.6\", num_scheduler_steps: 1025"), kv),
             Catch::Contains("num_scheduler_steps") &&
                 Catch::Contains("must be an integer from 1 to 1024"));
}

TEST_CASE("vllm V0: prefix caching is off by default, as in vLLM before 0.8",
          "[schedulers][vllm]") {
  const std::string kv = "{policy: paged, capacity_tokens: 64, block_size: 16}";
  CHECK(config_error("{kind: vllm, version: \"0.6.6\"}", kv) == "no error");
  CHECK_THAT(config_error("{kind: vllm}", kv), Catch::Contains("kv.prefix_caching"));
}

TEST_CASE("vllm: by default at most 256 sequences run at once (vLLM's max_num_seqs)",
          "[schedulers][vllm]") {
  // 257 one-token prompts at t = 0, ample KV: 257 tokens fit the default 2,048-token budget,
  // so only the 256 seats hold the last one back to the second step.
  std::string rows;
  for (int i = 0; i < 257; ++i) rows += "0,1,1\n";
  const auto r = run_requests(trace_scenario(
      rows, k_linear, vllm(""), "{policy: paged, capacity_tokens: 65536, block_size: 16}"));
  REQUIRE(r.size() == 257);
  for (size_t i = 0; i < 256; ++i) CHECK(r[i].first_admitted.count_ns() == 0);
  CHECK(r[256].first_admitted.count_ns() > 0);
}

namespace {

/// A scenario replaying rows "arrival_s,prompt_tokens,output_tokens,priority".
std::string priority_scenario(const std::string& rows, const std::string& scheduler,
                              const std::string& kv) {
  const std::string path =
      write_temp("priority.csv", "arrival_s,prompt_tokens,output_tokens,priority\n" + rows);
  return "workload: {trace: {path: " + path + "}}\nstep_time: " + k_linear +
         "\nscheduler: " + scheduler + "\nkv: " + kv + "\n";
}

}  // namespace

TEST_CASE("vllm: priority admits a later, more urgent arrival first", "[schedulers][vllm]") {
  // One seat. r0 (t=0, prompt 4, 2 tokens, priority 0), r1 (t=1 ms, prompt 2, 1 token,
  // priority 5), r2 (t=2 ms, prompt 2, 1 token, priority -1).
  // t=0  r0's prompt: 2 + 1 + 2 = 5 ms                      -> t=5:  r0 token 1
  // t=5  r0 decode: 3 ms                                    -> t=8:  r0 done
  // t=8  r1 and r2 wait; priority: r2 (-1) before r1 (5): 2 + 1 + 1 = 4 ms -> t=12: r2 done
  // t=12 r1: 4 ms                                           -> t=16: r1 done
  // fcfs takes them by arrival: r1 at t=8 (done t=12), r2 at t=12 (done t=16).
  const std::string rows = "0,4,2,0\n0.001,2,1,5\n0.002,2,1,-1\n";
  const std::string kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";
  const std::string sched = ", max_num_seqs: 1, max_num_batched_tokens: 64";
  auto prio =
      run_requests(priority_scenario(rows, vllm(sched + ", scheduling_policy: priority"), kv));
  REQUIRE(prio.size() == 3);
  CHECK(prio[0].finish.count_ns() == ms(8));
  CHECK(prio[2].first_admitted.count_ns() == ms(8));
  CHECK(prio[2].finish.count_ns() == ms(12));
  CHECK(prio[1].first_admitted.count_ns() == ms(12));
  CHECK(prio[1].finish.count_ns() == ms(16));
  auto fcfs = run_requests(priority_scenario(rows, vllm(sched), kv));
  CHECK(fcfs[1].finish.count_ns() == ms(12));
  CHECK(fcfs[2].finish.count_ns() == ms(16));
}

TEST_CASE("vllm: priority preempts the least urgent request, not the newest",
          "[schedulers][vllm]") {
  // 4 blocks of 4 tokens, budget 64. r0 (t=0, prompt 4, 8 tokens, priority 1), r1 (t=1 ms,
  // prompt 4, 8 tokens, priority 0): r0 is admitted first and r1 is the newest admission.
  // t=0  r0's prompt (1 block): 2 + 1 + 2 = 5 ms           -> t=5:  r0 token 1
  // t=5  r0 decode (ctx 5, 2 blocks) + r1's prompt (1 block): 2 + 2 + 2 = 6 -> t=11
  // t=11, 15, 19: two decodes, 4 ms each (r1 takes its 2nd block at t=11: all 4 used)
  //                                                         -> t=23: r0 has 5 tokens, ctx 8
  // t=23 r0 needs a 3rd block for ctx 9: none is free. The victim is the highest (priority,
  //      arrival, id): r0 itself, so the pass stops with nothing planned and plans again:
  //      r1 decode alone (r0 needs 3 blocks for its 9 tokens, 2 are free): 3 ms -> t=26
  // t=26, 29, 32: r1 decodes, 3 ms each (its 3rd block at t=26; r0 still does not fit)
  //                                                         -> t=35: r1 done (8 tokens)
  // t=35 r0 again: prefill 4 + 5 = 9 tokens: 2 + 1 + 4.5 = 7.5 ms -> t=42.5: token 6
  // t=42.5, 45.5: decodes, 3 ms each                        -> t=48.5: r0 done
  const std::string rows = "0,4,8,1\n0.001,4,8,0\n";
  const std::string kv = "{policy: paged, capacity_tokens: 16, block_size: 4}";
  const std::string sched = ", max_num_seqs: 4, max_num_batched_tokens: 64";
  auto prio =
      run_requests(priority_scenario(rows, vllm(sched + ", scheduling_policy: priority"), kv));
  REQUIRE(prio.size() == 2);
  CHECK(prio[0].preemptions == 1);
  CHECK(prio[1].preemptions == 0);
  CHECK(prio[0].first_token.count_ns() == ms(5));
  CHECK(prio[1].first_token.count_ns() == ms(11));
  CHECK(prio[1].finish.count_ns() == ms(35));
  CHECK(prio[0].finish.count_ns() == ms(48.5));
  // fcfs preempts the newest admission, r1, at t=23.
  auto fcfs = run_requests(priority_scenario(rows, vllm(sched), kv));
  CHECK(fcfs[0].preemptions == 0);
  CHECK(fcfs[1].preemptions == 1);
}

TEST_CASE("vllm: a preempted request not yet in the step gives no tokens back to the budget",
          "[schedulers][vllm]") {
  // Every step 10 ms, budget 32, 64 KV tokens in blocks of 1, priority policy, no full-prompt
  // reservation. r0 (t=0, prompt 2, 10 tokens, priority 0), v (t=0, prompt 33, 10 tokens,
  // priority 1), r1 (t=5 ms, prompt 60, 1 token, priority 0).
  // t=0   r0's 2 and v's first 30 (KV 32)                        -> t=10: r0 token 1
  // t=10  r0 decodes, v's last 3, r1 joins with 28 (KV 64: full)  -> t=20
  // t=20  r0 needs one more token of KV: v, the least urgent, is preempted before it was
  //       planned, so the budget stays 32 - 1 = 31 for r1's next chunk (KV 4 + 59 = 63)
  // t=30  r0 takes the last free token; r1's last prompt token finds none: r1 (the later
  //       arrival of priority 0) preempts itself. From here, every two steps: r1 recomputes
  //       31 tokens, then its next 29 do not fit beside r0's growing KV, and it is preempted
  //       again (at 30, 50, 70 and 90 ms); r0 finishes at 100 ms.
  // t=100 r1's 31, t=110 its last 29                              -> t=120: r1's token
  // (Had v's preemption given a token back, r1's prompt would have been done at t=30.)
  const std::string path = write_temp("budget.csv",
                                      "arrival_s,prompt_tokens,output_tokens,priority\n"
                                      "0,2,10,0\n0,33,10,1\n0.005,60,1,0\n");
  const auto r = run_requests(
      "workload: {trace: {path: " + path +
      "}}\nstep_time: {kind: linear, base_ms: 10}\nscheduler: " +
      vllm(", scheduling_policy: priority, max_num_seqs: 3, max_num_batched_tokens: 32, "
           "scheduler_reserve_full_isl: false") +
      "\nkv: {policy: paged, capacity_tokens: 64, block_size: 1}\n");
  REQUIRE(r.size() == 3);
  CHECK(r[0].preemptions == 0);
  CHECK(r[0].finish.count_ns() == ms(100));
  CHECK(r[1].preemptions == 1);
  CHECK(r[2].preemptions == 4);
  CHECK(r[2].first_token.count_ns() == ms(120));
}

}  // namespace t_schedulers_vllm_test
