// The api section (sim/api_latency.h): time outside the engine, worked by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "metrics/output.h"
#include "metrics/run_scenario.h"
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
  CHECK_THAT(input_error_of(base + "api: {workers: -1}\n"), Catch::Contains("api.workers"));
  const std::string engine = input_error_of(base + "api: {engine: vllm-0.9}\n");
  CHECK_THAT(engine, Catch::Contains("api.engine"));
  CHECK_THAT(engine, Catch::Contains("none, vllm-0.15, vllm-0.19"));
}

TEST_CASE("api: one worker serves a burst in turn, so the second request reaches the engine later",
          "[sim]") {
  // request_overhead 1 ms, tokenization 1 ms a token; r0 and r1 both sent at 0, prompt 2, one
  // output token each. One worker: r0's work 0-3 ms, r1's 3-6 ms; engine arrivals 3 and 6 ms.
  // t=3  r0 prefills 2: 2 + 1 + 1 = 4 ms                  -> t=7: r0's token (r1 came at 6)
  // t=7  r1 prefills 2: 4 ms                              -> t=11: r1's token
  // Client TTFT 7 and 11 ms; the engine's 4 and 5 ms. Unlimited workers: both reach the engine
  // at 3 ms and share one step (2 + 2 + 2 = 6 ms), both tokens at 9 ms.
  const std::string yaml = trace_scenario("0,2,1\n0,2,1\n", k_linear, k_vllm, k_kv) +
                           "api: {request_overhead_ms: 1, tokenize_ms_per_1k_tokens: 1000, "
                           "workers: 1}\n";
  auto r = run_requests(yaml);
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_token.count_ns() == ms(7));
  CHECK(r[0].engine_ttft().count_ns() == ms(4));
  CHECK(r[1].spec.arrival.count_ns() == 0);
  CHECK(r[1].spec.api_in.count_ns() == ms(6));
  CHECK(r[1].first_admitted.count_ns() == ms(7));
  CHECK(r[1].first_token.count_ns() == ms(11));
  CHECK(r[1].engine_ttft().count_ns() == ms(5));
  auto unlimited = run_requests(trace_scenario("0,2,1\n0,2,1\n", k_linear, k_vllm, k_kv) +
                                "api: {request_overhead_ms: 1, tokenize_ms_per_1k_tokens: 1000}\n");
  CHECK(unlimited[1].first_token.count_ns() == ms(9));
}

TEST_CASE(
    "api: with two workers a short prompt overtakes a long one and the next takes the first "
    "free worker",
    "[sim]") {
  // 1 ms a token, no fixed part. All sent at 0: r0 (prompt 4) on worker A 0-4 ms, r1 (prompt 1)
  // on worker B 0-1 ms, r2 (prompt 2) on B again, free first, 1-3 ms. Engine arrivals: r1 at 1,
  // r2 at 3, r0 at 4 ms.
  const std::string yaml = trace_scenario("0,4,1\n0,1,1\n0,2,1\n", k_linear, k_vllm, k_kv) +
                           "api: {tokenize_ms_per_1k_tokens: 1000, workers: 2}\n";
  auto r = run_requests(yaml);
  REQUIRE(r.size() == 3);
  CHECK(r[0].spec.api_in.count_ns() == ms(4));
  CHECK(r[1].spec.api_in.count_ns() == ms(1));
  CHECK(r[2].spec.api_in.count_ns() == ms(3));
  CHECK(r[1].first_admitted.count_ns() == ms(1));
}

TEST_CASE("api: engine vllm-0.19 gives the measured front end, and a key beside it wins", "[sim]") {
  // The preset: no fixed part, 0.85 ms per 1k prompt tokens, one worker. r0 (prompt 2000) is
  // tokenized 0-1.7 ms, r1 (prompt 1000, sent at 0 too) 1.7-2.55 ms. With workers: 0 r1 has its
  // own worker and reaches the engine at 0.85 ms.
  const std::string base = trace_scenario("0,2000,1\n0,1000,1\n", k_linear, k_vllm, k_kv);
  auto r = run_requests(base + "api: {engine: vllm-0.19}\n");
  REQUIRE(r.size() == 2);
  CHECK(r[0].spec.api_in.count_ns() == 1'700'000);
  CHECK(r[1].spec.api_in.count_ns() == 2'550'000);
  CHECK(r[1].spec.api_out.count_ns() == 0);
  auto own = run_requests(base + "api: {engine: vllm-0.19, workers: 0}\n");
  CHECK(own[1].spec.api_in.count_ns() == 850'000);
}

TEST_CASE(
    "api: engine vllm-0.15 adds the measured client-side time to every token, not to the engine",
    "[sim]") {
  // The preset: vLLM 0.19's front end (0.85 ms per 1k prompt tokens, one worker) and 5 ms to
  // each token's delivery. r0 (prompt 1000, sent at 0) reaches the engine at 0.85 ms; the
  // client has every token 5 ms after the engine made it, so TTFT and E2E grow by 5.85 ms and
  // TPOT not at all. A response_overhead_ms beside the preset wins.
  const std::string base = trace_scenario("0,1000,3\n", k_linear, k_vllm, k_kv);
  auto plain = run_requests(base);
  auto r = run_requests(base + "api: {engine: vllm-0.15}\n");
  REQUIRE(plain.size() == 1);
  REQUIRE(r.size() == 1);
  CHECK(r[0].spec.api_in.count_ns() == 850'000);
  CHECK(r[0].spec.api_out.count_ns() == ms(5));
  CHECK(r[0].spec.arrival.count_ns() == 0);
  CHECK(r[0].engine_ttft() == plain[0].engine_ttft());
  CHECK(r[0].first_token.count_ns() == plain[0].first_token.count_ns() + 5'850'000);
  CHECK(r[0].release.count_ns() == plain[0].release.count_ns() + 5'850'000);
  CHECK((r[0].finish - r[0].first_token) == (plain[0].finish - plain[0].first_token));
  auto own = run_requests(base + "api: {engine: vllm-0.15, response_overhead_ms: 1}\n");
  CHECK(own[0].spec.api_out.count_ns() == ms(1));
}

TEST_CASE(
    "api: summary.json, the printed table and requests.csv give the engine's TTFT beside "
    "the client's",
    "[sim]") {
  // The first test's run: client TTFT 7.5 and 11.5 ms, the engine's 5 and 6.5 ms (7 - 2 and
  // 12 - 5.5). Without the section, r0 alone: its prefill 2 + 1 + 2 = 5 ms, both TTFTs 5 ms.
  const std::string yaml = trace_scenario("0,4,2\n0.001,2,1\n", k_linear, k_vllm, k_kv) +
                           "api: {request_overhead_ms: 1, response_overhead_ms: 0.5, "
                           "tokenize_ms_per_1k_tokens: 250, coalesce_ms: 4}\n";
  const RunOutput out = run_scenario(doc_of(yaml));
  REQUIRE(out.summary.server_ttft_s);
  CHECK(out.summary.server_ttft_s->max == Approx(0.0065));
  CHECK(out.summary.ttft_s.max == Approx(0.0115));
  const auto j = nlohmann::json::parse(out.summary_json);
  CHECK(j["server_ttft_s"]["mean"].get<double>() == Approx(0.00575));
  CHECK_THAT(summary_table(out.summary), Catch::Contains("server TTFT"));
  CHECK_THAT(out.requests_csv, Catch::EndsWith(",0.006500000,\n"));
  // Without the section: no server row, and the column equals ttft_s.
  const RunOutput plain = run_scenario(doc_of(trace_scenario("0,4,2\n", k_linear, k_vllm, k_kv)));
  CHECK_FALSE(plain.summary.server_ttft_s);
  CHECK_FALSE(nlohmann::json::parse(plain.summary_json).contains("server_ttft_s"));
  CHECK_THAT(summary_table(plain.summary), !Catch::Contains("server TTFT"));
  CHECK_THAT(plain.requests_csv, Catch::EndsWith(",0.005000000,\n"));
}

}  // namespace t_sim_api_latency_test
