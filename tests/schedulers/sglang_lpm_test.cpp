// The sglang policy's lpm order (schedulers/sglang.cpp), worked by hand: queue order among
// requests whose cached prefixes are equally long, and fcfs once more than 128 requests wait.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace t_schedulers_sglang_lpm_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_scheduler =
    "step_time: {kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}\n"
    "scheduler: {kind: sglang, max_prefill_tokens: 16, chunked_prefill_size: -1, "
    "schedule_policy: lpm}\n"
    "kv: {policy: paged, capacity_tokens: 8192, block_size: 16, prefix_caching: true}\n";

}  // namespace

TEST_CASE("sglang: lpm takes equal cached prefixes in queue order", "[schedulers][sglang]") {
  // step_ms = 2 + 1 x sequences + 0.5 x prefill tokens. Blocks of 16, prefix caching, one trace
  // hash per 16 tokens; max_prefill_tokens 16 lets one request into each prefill batch. r0 (t=0,
  // prompt 32, 3 tokens, hashes 1;2); r1 and r2 (t=1 ms, prompt 32, 1 token, hashes 7;8 and
  // 5;6): neither hits anything, a tie at 0 cached tokens.
  // t=0  r0's prefill, 32: 2 + 1 + 16 = 19 ms        -> t=19: r0 token 1
  // t=19 the tie goes to r1, the first in the queue   -> t=38: r1 done
  // t=38 r2: 19 ms                                    -> t=57: r2 done
  // t=57 r0 decodes twice, 3 ms each                  -> t=63: r0 done
  // Taking the last of the tied requests would finish r2 at 38 and r1 at 57.
  const std::string path = write_temp("ties.csv",
                                      "arrival_s,prompt_tokens,output_tokens,prefix_hash\n"
                                      "0,32,3,1;2\n0.001,32,1,7;8\n0.001,32,1,5;6\n");
  const auto r = run_requests("workload: {trace: {path: " + path + ", hash_block_tokens: 16}}\n" +
                              k_scheduler);
  REQUIRE(r.size() == 3);
  CHECK(r[1].finish.count_ns() == ms(38));
  CHECK(r[2].finish.count_ns() == ms(57));
  CHECK(r[0].finish.count_ns() == ms(63));
}

TEST_CASE("sglang: lpm orders a queue of up to 128 requests, fcfs a longer one",
          "[schedulers][sglang]") {
  // As above: r0 (t=0, prompt 32, 2 tokens, hashes 1;2) prefills alone, 19 ms. At t=1 ms,
  // `waiting` requests arrive: all but the last have a prompt of 32 tokens that hits nothing
  // (hashes of their own) and one token; the last (prompt 48, hashes 1;2;3) hits r0's two blocks.
  // t=19, with 128 waiting, lpm takes the last first: it computes 16 tokens, 2 + 1 + 8 = 11 ms
  // -> done at t=30. With 129 waiting, SGLang's lpm gives way to fcfs: the first goes, 19 ms;
  // at t=38 128 wait, and lpm takes the last.
  const auto last_of = [](int waiting) {
    std::string csv = "arrival_s,prompt_tokens,output_tokens,prefix_hash\n0,32,2,1;2\n";
    for (int i = 0; i + 1 < waiting; ++i)
      csv += "0.001,32,1," + std::to_string(10 + 2 * i) + ";" + std::to_string(11 + 2 * i) + "\n";
    csv += "0.001,48,1,1;2;3\n";
    const std::string path = write_temp("queue.csv", csv);
    const auto r = run_requests("workload: {trace: {path: " + path + ", hash_block_tokens: 16}}\n" +
                                k_scheduler);
    REQUIRE(r.size() == static_cast<size_t>(waiting) + 1);
    return r.back();
  };
  const Request at_limit = last_of(128);
  CHECK(at_limit.first_admitted.count_ns() == ms(19));
  CHECK(at_limit.finish.count_ns() == ms(30));
  CHECK(at_limit.cached_prompt_tokens == 32);
  const Request over = last_of(129);
  CHECK(over.first_admitted.count_ns() == ms(38));
  CHECK(over.finish.count_ns() == ms(49));
}

}  // namespace t_schedulers_sglang_lpm_test
