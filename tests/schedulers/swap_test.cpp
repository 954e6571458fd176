// Preemption by swapping (continuous, orca, sarathi: preemption_mode: swap): the KV goes to host
// memory and back over a link, timed from its bytes, instead of being recomputed.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_schedulers_swap_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
/// Four blocks of 16 tokens.
const std::string k_small_kv = "{policy: paged, capacity_tokens: 64, block_size: 16}";
/// r0 (t=0) and r1 (t=1 ms), each a prompt of 16 and 20 tokens out (3 blocks at the peak).
const std::string k_two = "0,16,20\n0.001,16,20\n";
/// 100,000 bytes a token over 1 GB/s: 0.1 ms a token each way.
const std::string k_swap =
    "{kind: continuous, max_num_seqs: 4, preemption_mode: swap, swap_bandwidth_gb_s: 1, "
    "kv_bytes_per_token: 100000";

}  // namespace

TEST_CASE("swap: a preempted request resumes without recomputing, paying its transfers",
          "[schedulers][swap]") {
  // Both policies: t=0 r0's prefill, 2 + 1 + 8 = 11 ms -> t=11; t=11 r0 decodes (2nd block),
  // r1 joins (1 block): 12 ms -> t=23; then both decode, 4 ms a step, until t=83, when r0 needs
  // a 3rd block for its 33rd token and r1 (context 31, 16 tokens made) is preempted.
  // Recompute: r0 alone 3 ms a step -> t=92: r0 done; r1 recomputes 16 + 16 = 32 tokens:
  //   19 ms -> t=111 (token 17); 3 decodes -> t=120.
  // Swap: r1's 31 tokens go out: 31 x 100,000 B / 1 GB/s = 3.1 ms added to the step:
  //   t=83 r0 decodes, 3 + 3.1 -> t=89.1; r1 cannot come back (2 blocks, 1 free) until r0 is done:
  //   t=92.1, t=95.1: r0 done. t=95.1 r1's 31 tokens come back (3.1 ms) in the step where it
  //   decodes its 17th token: 3 + 3.1 -> t=101.2; 3 decodes -> t=110.2: done.
  auto rc = run_requests(
      trace_scenario(k_two, k_linear, "{kind: continuous, max_num_seqs: 4}", k_small_kv));
  CHECK(rc[0].finish.count_ns() == ms(92));
  CHECK(rc[1].finish.count_ns() == ms(120));
  CHECK(rc[1].preemptions == 1);
  CHECK(rc[1].swap_preemptions == 0);  // recompute is the default: nothing goes to host memory
  auto r = run_requests(trace_scenario(k_two, k_linear, k_swap + "}", k_small_kv));
  CHECK(r[1].preemptions == 1);
  CHECK(r[1].swap_preemptions == 1);
  CHECK(r[0].finish.count_ns() == ms(95.1));
  CHECK(r[1].first_token.count_ns() == ms(23));
  CHECK(r[1].finish.count_ns() == ms(110.2));
}

TEST_CASE("swap: with the host swap space full, preemption falls back to recompute",
          "[schedulers][swap]") {
  // 0.003 GB of swap space holds 30 tokens of 100,000 bytes; r1's 31 do not fit, so it is
  // recomputed: exactly the recompute timeline above.
  auto r =
      run_requests(trace_scenario(k_two, k_linear, k_swap + ", swap_space_gb: 0.003}", k_small_kv));
  CHECK(r[1].preemptions == 1);
  CHECK(r[1].swap_preemptions == 0);
  CHECK(r[0].finish.count_ns() == ms(92));
  CHECK(r[1].finish.count_ns() == ms(120));
}

TEST_CASE("swap: a swap-in gives its host swap space back for the next swap-out",
          "[schedulers][swap]") {
  // The pair above, twice: r2 and r3 arrive 200 ms after r0 and r1, once both are done. The
  // swap space holds 31 tokens, exactly r1's context: r3's 31 tokens fit only if r1's were given
  // back when it came in. Both pairs then run the swap timeline (r3 done at 200 + 110.2 ms).
  const std::string four = k_two + "0.2,16,20\n0.201,16,20\n";
  const std::string yaml =
      trace_scenario(four, k_linear, k_swap + ", swap_space_gb: 0.0031}", k_small_kv);
  const auto r = run_requests(yaml);
  CHECK(r[1].preemptions == 1);
  CHECK(r[3].preemptions == 1);
  CHECK(r[1].finish.count_ns() == ms(110.2));
  CHECK(r[3].finish.count_ns() == ms(310.2));
  const Summary s = run_scenario(doc_of(yaml)).summary;
  CHECK(s.preemptions == 2);
  CHECK(s.swap_preemptions == 2);
}

TEST_CASE("swap: the bytes of a KV token come from kv.memory or must be given",
          "[schedulers][swap]") {
  const auto error = [](const std::string& sched, const std::string& kv) {
    return input_error_of(trace_scenario("0,4,2\n", k_linear, sched, kv));
  };
  CHECK_THAT(error("{kind: continuous, max_num_seqs: 4, preemption_mode: swap, "
                   "swap_bandwidth_gb_s: 25}",
                   k_small_kv),
             Catch::Contains("swap needs the KV bytes of one token to time the transfers"));
  CHECK_THAT(error("{kind: orca, max_batch_size: 4, swap_space_gb: 4}", k_small_kv),
             Catch::Contains("is only used with preemption_mode: swap"));
  const std::string memory =
      "{policy: paged, block_size: 16, memory: {accelerator_gib: 80, parameters: 8.0e9, "
      "layers: 32, kv_heads: 8, head_dim: 128}}";
  CHECK(error("{kind: sarathi, max_batch_size: 4, token_budget: 64, preemption_mode: swap, "
              "swap_bandwidth_gb_s: 25}",
              memory) == "(no error)");
  CHECK_THAT(error("{kind: sarathi, max_batch_size: 4, token_budget: 64, preemption_mode: swap, "
                   "swap_bandwidth_gb_s: 25, kv_bytes_per_token: 1000}",
                   memory),
             Catch::Contains("must not be given with kv.memory"));
}

}  // namespace t_schedulers_swap_test
