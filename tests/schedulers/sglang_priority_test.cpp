// The sglang policy's dfs-weight order and priority scheduling (schedulers/sglang_dfs.h,
// docs/schedulers.md#sglang-dfs-weight): timelines on tiny traces worked out by hand.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_schedulers_sglang_priority_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";

std::string scenario(const std::string& csv, const std::string& header, const std::string& sched,
                     const std::string& kv_extra) {
  const std::string path = write_temp("sgp.csv", header + "\n" + csv);
  return "workload: {trace: {path: " + path + ", hash_block_tokens: 16}}\nstep_time: " + k_linear +
         "\nscheduler: " + sched + "\nkv: {policy: paged, capacity_tokens: 1024, block_size: 16" +
         kv_extra + "}\n";
}

}  // namespace

TEST_CASE("sglang priority: dfs-weight walks the heaviest cached branch first",
          "[schedulers][sglang]") {
  // Blocks of 16, prefix caching, one trace hash per 16 tokens, one output token each;
  // max_prefill_tokens 16 lets one request into each prefill batch.
  // r0 (t=0, prompt 32, hashes 1;2): 2 + 1 + 16 = 19 ms -> t=19, blocks [1 2] cached.
  // r1 (t=0, prompt 32, hashes 5;6): t=19 -> t=38, blocks [5 6] cached.
  // At t=30, in queue order: d (32, hashes 3;4: nothing cached, at the root), a (48, 5;6;9),
  // b (48, 1;2;7), c (48, 1;2;8), e (48, 1;2;10): a, b, c and e hit their first two blocks and
  // compute 16 tokens, 2 + 1 + 8 = 11 ms; d computes 32, 19 ms.
  // dfs-weight at t=38: branch [1 2] has 3 waiting, [5 6] 1: b (-> 49); then [1 2] 2 against
  // 1: c (-> 60); then 1 and 1, a tie, to the branch whose first request is earlier in the
  // queue: a (-> 71); then e (-> 82); d, at the root, last (-> 101).
  // fcfs: d (-> 57), a (-> 68), b (-> 79), c (-> 90), e (-> 101).
  const std::string csv =
      "0,32,1,1;2\n0,32,1,5;6\n0.030,32,1,3;4\n0.030,48,1,5;6;9\n0.030,48,1,1;2;7\n"
      "0.030,48,1,1;2;8\n0.030,48,1,1;2;10\n";
  const std::string header = "arrival_s,prompt_tokens,output_tokens,prefix_hash";
  const auto run = [&](const std::string& policy, const std::string& kv_extra) {
    return run_requests(scenario(csv, header,
                                 "{kind: sglang, max_prefill_tokens: 16, chunked_prefill_size: "
                                 "-1, schedule_policy: " +
                                     policy + "}",
                                 kv_extra));
  };
  auto r = run("dfs-weight", ", prefix_caching: true");
  REQUIRE(r.size() == 7);
  CHECK(r[1].finish.count_ns() == ms(38));
  CHECK(r[4].finish.count_ns() == ms(49));   // b
  CHECK(r[5].finish.count_ns() == ms(60));   // c
  CHECK(r[3].finish.count_ns() == ms(71));   // a
  CHECK(r[6].finish.count_ns() == ms(82));   // e
  CHECK(r[2].finish.count_ns() == ms(101));  // d
  CHECK(r[4].cached_prompt_tokens == 32);
  r = run("fcfs", ", prefix_caching: true");
  CHECK(r[2].finish.count_ns() == ms(57));
  CHECK(r[3].finish.count_ns() == ms(68));
  CHECK(r[4].finish.count_ns() == ms(79));
  CHECK(r[6].finish.count_ns() == ms(101));
  // Without a prefix cache every request is at the root: dfs-weight is fcfs (d first, and
  // every prompt computed whole: a at 57 + 2 + 1 + 24 = 84).
  r = run("dfs-weight", "");
  CHECK(r[2].finish.count_ns() == ms(57));
  CHECK(r[3].finish.count_ns() == ms(84));
}

TEST_CASE("sglang priority: enable_priority_scheduling orders fcfs and lof by priority",
          "[schedulers][sglang]") {
  // r0 (t=0, prompt 10) keeps the engine busy: 2 + 1 + 5 = 8 ms. At t=1 ms r1 (priority 0),
  // r2 (priority 5), r3 (priority -3), prompts of 4 and one token: one per batch
  // (max_prefill_tokens 4), 2 + 1 + 2 = 5 ms each, from t=8: 13, 18, 23.
  const std::string header = "arrival_s,prompt_tokens,output_tokens,priority";
  const std::string csv = "0,10,1,0\n0.001,4,1,0\n0.001,4,1,5\n0.001,4,1,-3\n";
  const auto run = [&](const std::string& extra) {
    return run_requests(scenario(
        csv, header, "{kind: sglang, max_prefill_tokens: 4, chunked_prefill_size: -1" + extra + "}",
        ""));
  };
  auto r = run("");  // no priorities: the queue's order
  CHECK(r[1].finish.count_ns() == ms(13));
  CHECK(r[2].finish.count_ns() == ms(18));
  CHECK(r[3].finish.count_ns() == ms(23));
  r = run(", enable_priority_scheduling: true");  // SGLang's default: the highest value first
  CHECK(r[2].finish.count_ns() == ms(13));
  CHECK(r[1].finish.count_ns() == ms(18));
  CHECK(r[3].finish.count_ns() == ms(23));
  r = run(", enable_priority_scheduling: true, schedule_low_priority_values_first: true");
  CHECK(r[3].finish.count_ns() == ms(13));
  CHECK(r[1].finish.count_ns() == ms(18));
  CHECK(r[2].finish.count_ns() == ms(23));
  // lof with priorities: (priority, longest output). r1 (priority 1, 1 token), r2 (0, 3
  // tokens), r3 (0, 2 tokens), one running at a time: r1 (8 -> 13), then r2 before r3.
  const auto lof =
      run_requests(scenario("0,10,1,0\n0.001,4,1,1\n0.001,4,3,0\n0.001,4,2,0\n", header,
                            "{kind: sglang, max_running_requests: 1, chunked_prefill_size: -1, "
                            "schedule_policy: lof, enable_priority_scheduling: true}",
                            ""));
  CHECK(lof[1].finish.count_ns() == ms(13));
  CHECK(lof[2].first_admitted < lof[3].first_admitted);
}

TEST_CASE("sglang priority: settings SGLang does not combine are refused", "[schedulers][sglang]") {
  const auto error = [](const std::string& sched) {
    return input_error_of(
        scenario("0,4,1,0\n", "arrival_s,prompt_tokens,output_tokens,priority", sched, ""));
  };
  CHECK_THAT(error("{kind: sglang, schedule_policy: lpm, enable_priority_scheduling: true}"),
             Catch::Contains("does not read priorities"));
  CHECK_THAT(error("{kind: sglang, schedule_policy: dfs-weight, enable_priority_scheduling: "
                   "true}"),
             Catch::Contains("does not read priorities"));
  CHECK_THAT(error("{kind: sglang, schedule_low_priority_values_first: true}"),
             Catch::Contains("only used with enable_priority_scheduling"));
  CHECK(error("{kind: sglang, schedule_policy: dfs-weight}") == "(no error)");
}

}  // namespace t_schedulers_sglang_priority_test
