// Token budgets at the step where they change hands: continuous batching gives a victim's
// planned tokens back to the step's budget when it is preempted after being planned (priority
// order can pick a victim already planned), and SGLang's last chunk of a chunked prompt takes
// its tokens out of max_prefill_tokens before any new request may join the batch. Each worked
// by hand on 10 ms steps, so one token more or less in a chunk moves a first token by a step.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support.h"

namespace t_schedulers_budget_refund_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_step = "{kind: linear, base_ms: 10}";

std::vector<Request> run_trace(const std::string& header, const std::string& rows,
                               const std::string& scheduler, const std::string& kv) {
  const std::string path = write_temp("budget_refund.csv", header + "\n" + rows);
  return run_requests("workload: {trace: {path: " + path + "}}\nstep_time: " + k_step +
                      "\nscheduler: " + scheduler + "\nkv: " + kv + "\n");
}

}  // namespace

TEST_CASE("budget refund: a planned victim's tokens go back to the step's budget",
          "[schedulers][continuous]") {
  // Budget 3 tokens, chunked, priority order, 9 KV tokens in blocks of 1.
  // D (t=0, priority 9, prompt 3, 4 out), X (t=1 ms, prompt 1, 4 out), Y (t=15 ms, prompt 5).
  // 0-10   D's prefill (3)                                         KV: D 3
  // 10-20  D decodes, X's prefill (1)                              KV: D 4, X 1
  // 20-30  D, X decode; Y's first chunk (the 1 token left)         KV: D 5, X 2, Y 1
  // 30-40  D decodes (KV full at 9); X cannot grow: the victim is the least urgent, D, already
  //        planned: its token goes back, so X decodes and Y gets a chunk of 2 (KV 3 + 3).
  // 40-50  X decodes, Y's last 2: Y's first token at 50 ms. Without the refund Y's chunk at
  //        30 ms is 1 and its prefill ends a step or more later.
  const auto r = run_trace("arrival_s,prompt_tokens,output_tokens,priority",
                           "0,3,4,9\n0.001,1,4,0\n0.015,5,2,0\n",
                           "{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 3, "
                           "chunked_prefill: true, policy: priority}",
                           "{policy: paged, capacity_tokens: 9, block_size: 1}");
  REQUIRE(r.size() == 3);
  CHECK(r[0].first_token.count_ns() == ms(10));
  CHECK(r[1].first_token.count_ns() == ms(20));
  CHECK(r[0].preemptions >= 1);
  CHECK(r[2].first_admitted.count_ns() == ms(20));
  CHECK(r[2].first_token.count_ns() == ms(50));
}

TEST_CASE("budget refund: SGLang's last chunk counts against max_prefill_tokens",
          "[schedulers][sglang]") {
  // chunked_prefill_size 16, max_prefill_tokens 10. A (prompt 20) and B arrive at t=0.
  // 0-10   A's first chunk of 16 closes the batch.
  // 10-20  A's last 4 leave an input budget of 10 - 4 = 6: B joins if its prompt is at most 6
  //        (first token at 20 ms); a prompt of 7 waits for the next prefill batch (30 ms).
  const auto first_token = [](int prompt) {
    const auto r = run_trace("arrival_s,prompt_tokens,output_tokens",
                             "0,20,2\n0," + std::to_string(prompt) + ",2\n",
                             "{kind: sglang, chunked_prefill_size: 16, max_prefill_tokens: 10}",
                             "{policy: paged, capacity_tokens: 1024, block_size: 16}");
    REQUIRE(r.size() == 2);
    CHECK(r[0].first_token.count_ns() == ms(20));
    return r[1].first_token.count_ns();
  };
  CHECK(first_token(6) == ms(20));
  CHECK(first_token(7) == ms(30));
}

}  // namespace t_schedulers_budget_refund_test
