// The api section (sim/api_latency.h): time outside the engine, worked by hand.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_sim_api_latency_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 * sequences + 0.5 * prefill tokens
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_vllm =
    "{kind: vllm, enable_prefix_caching: false, max_num_seqs: 4, max_num_batched_tokens: 8192}";
const std::string k_kv = "{policy: paged, capacity_tokens: 8192, block_size: 16}";

}  // namespace

TEST_CASE("api: coalescing, server overhead, tokenization and streaming around the engine",
          "[sim]") {
  // request_overhead 1 ms, tokenization 0.25 ms a token (250 ms per 1k), coalescing every 4 ms,
  // streaming 0.5 ms. r0 (sent at 0, prompt 4, 2 tokens), r1 (sent at 1 ms, prompt 2, 1).
  // r0 leaves the client at 0 (a multiple of 4), reaches the engine at 0 + 1 + 1 = 2 ms;
  // r1 waits for the client's next send at 4 ms and reaches the engine at 4 + 1 + 0.5 = 5.5 ms.
  // t=2  r0 prefills 4: 2 + 1 + 2 = 5 ms                  -> t=7: r0 token 1
  // t=7  r0 decodes, r1 prefills 2: 2 + 2 + 1 = 5 ms      -> t=12: r0 done, r1 done
  // The client has each token 0.5 ms later: r0's first at 7.5 ms (TTFT 7.5 ms), its last and
  // r1's at 12.5 ms (r1's TTFT 11.5 ms). Admission stays an engine time.
  const std::string yaml = trace_scenario("0,4,2\n0.001,2,1\n", k_linear, k_vllm, k_kv) +
                           "api: {request_overhead_ms: 1, response_overhead_ms: 0.5, "
                           "tokenize_ms_per_1k_tokens: 250, coalesce_ms: 4}\n";
  auto r = run_requests(yaml);
  REQUIRE(r.size() == 2);
  CHECK(r[0].spec.arrival.count_ns() == 0);
  CHECK(r[0].first_admitted.count_ns() == ms(2));
  CHECK(r[0].first_token.count_ns() == ms(7) + ms(1) / 2);
  CHECK(r[0].release.count_ns() == ms(12) + ms(1) / 2);
  CHECK(r[1].spec.arrival.count_ns() == ms(1));
  CHECK(r[1].first_admitted.count_ns() == ms(7));
  CHECK(r[1].first_token.count_ns() == ms(12) + ms(1) / 2);
}

TEST_CASE("api: a long prompt's tokenization lets a later short one reach the engine first",
          "[sim]") {
  // 1 ms per 1k tokens. r0 (sent at 0, prompt 4000) reaches the engine at 4 ms; r1 (sent at
  // 1 ms, prompt 1000) at 2 ms, first.
  // t=2   r1 prefills 1000: 2 + 1 + 500 = 503 ms           -> t=505: r1 done
  // t=505 r0 prefills 4000: 2 + 1 + 2000 = 2003 ms         -> t=2508: r0 done (TTFT 2508 ms)
  const std::string yaml = trace_scenario("0,4000,1\n0.001,1000,1\n", k_linear, k_vllm, k_kv) +
                           "api: {tokenize_ms_per_1k_tokens: 1}\n";
  auto r = run_requests(yaml);
  REQUIRE(r.size() == 2);
  CHECK(r[1].first_admitted.count_ns() == ms(2));
  CHECK(r[1].first_token.count_ns() == ms(505));
  CHECK(r[0].first_admitted.count_ns() == ms(505));
  CHECK(r[0].first_token.count_ns() == ms(2508));
  CHECK(r[0].spec.arrival.count_ns() == 0);
}

TEST_CASE("api: bad values and unknown keys are refused", "[sim]") {
  const std::string base = trace_scenario("0,4,2\n", k_linear, k_vllm, k_kv);
  CHECK_THAT(input_error_of(base + "api: {request_overhead_ms: -1}\n"),
             Catch::Contains("api.request_overhead_ms"));
  CHECK_THAT(input_error_of(base + "api: {coalesce: 4}\n"), Catch::Contains("api.coalesce"));
}

}  // namespace t_sim_api_latency_test
