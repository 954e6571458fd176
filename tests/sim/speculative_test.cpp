// Speculative decoding (sim/speculative.h): verify steps worked out by hand, the proposers'
// costs, vLLM's token budget, the max_batch cutoff and the acceptance draws.
#include "sim/speculative.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "tests/support.h"

namespace t_sim_speculative_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step_ms = 2 + 1 x sequences + 0.5 x prefill tokens; a verify's 1 + k tokens count as prefill.
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_vllm = "{kind: vllm, enable_prefix_caching: false}";
const std::string k_kv = "{policy: paged, capacity_tokens: 100000, block_size: 16}";
// ngram with 0.25 ms of host time per verify step: a proposer whose cost is known exactly.
const std::string k_ngram_all =
    "speculative: {method: ngram, k: 3, acceptance: {rate: 1}, "
    "proposer: {host_ms: 0.25}}\n";

using Run = CheckedRun;

Run run(const std::string& yaml) { return run_checked(yaml); }

std::string one_request(const std::string& speculative, const std::string& scheduler = k_vllm) {
  return trace_scenario("0,4,9\n", k_linear, scheduler, k_kv) + speculative;
}

}  // namespace

TEST_CASE("speculative: acceptance 1 and k 3 finish 9 tokens in a prefill and two verifies",
          "[sim][speculative]") {
  // t=0     prefill 4 tokens: 2 + 1 + 0.5*4 = 5 ms                      -> t=5: token 1
  // t=5     verify 1 + 3 drafts over 4 stored: 2 + 1 + 0.5*4 + 0.25 = 5.25 -> t=10.25: 5 tokens
  // t=10.25 4 left, so 3 drafts again: 5.25 ms                          -> t=15.5: 9 tokens
  const Run r = run(one_request(k_ngram_all));
  REQUIRE(r.requests.size() == 1);
  CHECK(r.requests[0].generated_tokens == 9);
  CHECK(r.requests[0].first_token.count_ns() == ms(5));
  CHECK(r.requests[0].finish.count_ns() == ms(15.5));
  CHECK(r.stats.steps == 3);
  REQUIRE(r.stats.speculative);
  CHECK(r.stats.speculative->verifies == 2);
  CHECK(r.stats.speculative->drafted_tokens == 6);
  CHECK(r.stats.speculative->accepted_tokens == 6);
  CHECK(r.stats.prefill_tokens == 4);  // the verifies' tokens are not prefill
}

TEST_CASE("speculative: acceptance 0 takes the plain run's steps but costs the verifies",
          "[sim][speculative]") {
  // Without speculation: prefill 5 ms, then 8 decodes of 2 + 1 = 3 ms: done at 29 ms, 9 steps.
  const Run plain = run(one_request(""));
  CHECK(plain.requests[0].finish.count_ns() == ms(29));
  CHECK(plain.stats.steps == 9);
  // Rejecting every draft: still one token a step, 9 steps. Drafts are capped by what is left
  // after the verify's own token: tokens 2-6 verify 3 drafts (5.25 ms each), token 7 two
  // (2 + 1 + 0.5*3 + 0.25 = 4.75), token 8 one (4.25), token 9 none: a plain decode (3 ms).
  // 5 + 5*5.25 + 4.75 + 4.25 + 3 = 43.25 ms.
  const Run none = run(one_request(
      "speculative: {method: ngram, k: 3, acceptance: {rate: 0}, proposer: {host_ms: 0.25}}\n"));
  CHECK(none.requests[0].generated_tokens == 9);
  CHECK(none.requests[0].finish.count_ns() == ms(43.25));
  CHECK(none.stats.steps == 9);
  CHECK(none.stats.speculative->verifies == 7);
  CHECK(none.stats.speculative->drafted_tokens == 5 * 3 + 2 + 1);
  CHECK(none.stats.speculative->accepted_tokens == 0);
}

TEST_CASE("speculative: a draft model's passes are added to each verify", "[sim][speculative]") {
  // The draft's step model: 1 + 0.5 x sequences = 1.5 ms a pass, 3 passes = 4.5 ms a verify.
  // t=0 prefill 5 ms; two verifies of 5 + 4.5 = 9.5 ms: done at 24 ms.
  const Run r = run(
      one_request("speculative: {method: draft, k: 3, acceptance: {rate: 1}, proposer: {step_time: "
                  "{kind: linear, base_ms: 1, per_seq_ms: 0.5}}}\n"));
  CHECK(r.requests[0].finish.count_ns() == ms(24));
  CHECK(r.stats.speculative->proposer_ms == Approx(9.0));
}

TEST_CASE("speculative: eagle's proposer is its layers' share of the target's decode step",
          "[sim][speculative]") {
  // 1 of 4 layers, 3 drafts: 3 x 0.25 x the target's plain decode of one sequence (3 ms) =
  // 2.25 ms. Two verifies of 5 + 2.25 ms after the 5 ms prefill: done at 19.5 ms.
  const Run r = run(
      one_request("speculative: {method: eagle, k: 3, acceptance: {rate: 1}, proposer: {layers: 1, "
                  "target_layers: 4}}\n"));
  CHECK(r.requests[0].finish.count_ns() == ms(19.5));
}

TEST_CASE("speculative: eagle without a proposer map drafts with one layer of the catalogue model",
          "[sim][speculative]") {
  // No proposer section: one draft layer (the default), the target's layers from the catalogue
  // model the step time names (Llama 3.1 8B: 32), so the proposer costs what an explicit
  // `proposer: {layers: 1, target_layers: 32}` costs, and more than nothing.
  const std::string base = trace_scenario(
      "0,64,9\n", "{kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}", k_vllm, k_kv);
  const Run implied = run(base + "speculative: {method: eagle, k: 3, acceptance: {rate: 1}}\n");
  const Run given = run(base +
                        "speculative: {method: eagle, k: 3, acceptance: {rate: 1}, proposer: "
                        "{layers: 1, target_layers: 32}}\n");
  REQUIRE(implied.stats.speculative);
  REQUIRE(given.stats.speculative);
  CHECK(implied.stats.speculative->proposer_ms > 0);
  CHECK(implied.stats.speculative->proposer_ms == given.stats.speculative->proposer_ms);
  CHECK(implied.requests[0].finish == given.requests[0].finish);
}

TEST_CASE("speculative: a verify takes 1 + k of vLLM's token budget, fewer drafts when short",
          "[sim][speculative]") {
  // max_num_batched_tokens 6, two requests (prompt 4, 9 tokens) at t=0.
  // t=0     r0 prefill 4, r1 chunk 2: 2 + 2 + 0.5*6 = 7 ms              -> t=7: r0 token 1
  // t=7     r0 verifies 3 drafts (4 of the budget), r1 its last 2 prompt tokens:
  //         2 + 2 + 0.5*6 + 0.25 = 7.25 ms                              -> t=14.25: r0 5, r1 1
  // t=14.25 r0 verifies 3 (4), r1 only 1 draft (the 2 left): 7.25 ms   -> t=21.5: r0 done, r1 3
  // t=21.5  r1 alone, 3 drafts: 2 + 1 + 0.5*4 + 0.25 = 5.25 ms          -> t=26.75: r1 7
  // t=26.75 r1 needs 2 more: 1 draft, 2 + 1 + 0.5*2 + 0.25 = 4.25 ms     -> t=31: r1 9
  const Run r = run(trace_scenario("0,4,9\n0,4,9\n", k_linear,
                                   "{kind: vllm, enable_prefix_caching: false, "
                                   "max_num_seqs: 2, max_num_batched_tokens: 6}",
                                   k_kv) +
                    k_ngram_all);
  CHECK(r.requests[0].first_token.count_ns() == ms(7));
  CHECK(r.requests[0].finish.count_ns() == ms(21.5));
  CHECK(r.requests[1].first_token.count_ns() == ms(14.25));
  CHECK(r.requests[1].finish.count_ns() == ms(31));
  CHECK(r.stats.speculative->drafted_tokens == 3 + 3 + 1 + 3 + 1);
  CHECK(r.stats.prefill_tokens == 8);
}

TEST_CASE("speculative: a running request the verifies leave no budget for waits its turn",
          "[sim][speculative]") {
  // vLLM, max_num_batched_tokens 8, three requests (prompt 1, 9 tokens) at t=0.
  // t=0     three prefills of 1: 2 + 3 + 0.5*3 = 6.5 ms                 -> t=6.5: token 1 each
  // t=6.5   r0 and r1 verify 3 drafts (4 each: the whole budget), r2 gets no token this step:
  //         2 + 2 + 0.5*8 + 0.25 = 8.25 ms                              -> t=14.75: r0, r1 5
  // t=14.75 the same again                                              -> t=23: r0, r1 done
  // t=23    r2 alone, 3 drafts: 2 + 1 + 0.5*4 + 0.25 = 5.25 ms          -> t=28.25: r2 5
  // t=28.25 again                                                       -> t=33.5: r2 done
  const Run r = run(trace_scenario("0,1,9\n0,1,9\n0,1,9\n", k_linear,
                                   "{kind: vllm, enable_prefix_caching: false, "
                                   "max_num_seqs: 3, max_num_batched_tokens: 8}",
                                   k_kv) +
                    k_ngram_all);
  REQUIRE(r.requests.size() == 3);
  CHECK(r.requests[0].finish.count_ns() == ms(23));
  CHECK(r.requests[1].finish.count_ns() == ms(23));
  CHECK(r.requests[2].first_token.count_ns() == ms(6.5));
  CHECK(r.requests[2].finish.count_ns() == ms(33.5));
  CHECK(r.stats.steps == 5);
}

TEST_CASE("speculative: above max_batch running requests the engine does not speculate",
          "[sim][speculative]") {
  // Two requests (prompt 4, 3 tokens) at t=0; both prefill: 2 + 2 + 0.5*8 = 8 ms.
  const std::string base = trace_scenario("0,4,3\n0,4,3\n", k_linear, k_vllm, k_kv);
  // max_batch 1: two run, so plain decodes: 4 ms each, done at 16 ms; 2 steps ran without.
  const Run off = run(base +
                      "speculative: {method: ngram, k: 3, acceptance: {rate: 1}, "
                      "max_batch: 1, proposer: {host_ms: 0.25}}\n");
  CHECK(off.requests[0].finish.count_ns() == ms(16));
  CHECK(off.stats.speculative->verifies == 0);
  CHECK(off.stats.speculative->off_steps == 2);
  // max_batch 2: both verify their 1 draft (2 left): 2 + 2 + 0.5*4 + 0.25 = 6.25 ms -> 14.25.
  const Run on = run(base +
                     "speculative: {method: ngram, k: 3, acceptance: {rate: 1}, "
                     "max_batch: 2, proposer: {host_ms: 0.25}}\n");
  CHECK(on.requests[0].finish.count_ns() == ms(14.25));
  CHECK(on.requests[1].finish.count_ns() == ms(14.25));
  CHECK(on.stats.speculative->off_steps == 0);
}

TEST_CASE("speculative: sglang and trtllm verify too, holding KV for the drafts",
          "[sim][speculative]") {
  for (const char* scheduler : {"{kind: sglang}", "{kind: trtllm}"}) {
    INFO(scheduler);
    const Run r = run(one_request(k_ngram_all, scheduler));
    CHECK(r.requests[0].finish.count_ns() == ms(15.5));
  }
}

TEST_CASE("speculative: tokens per verify converge to (1 - a^(k+1)) / (1 - a)",
          "[sim][speculative]") {
  auto spec = std::make_shared<SpeculativeSpec>();
  spec->k = 4;
  const double a = 0.6;
  double reach = 1;
  for (int i = 0; i < spec->k; ++i) {
    reach *= a;
    spec->accepted_cdf.push_back(1 - reach);
  }
  spec->accepted_cdf.push_back(1);
  Speculator s(spec, 7), again(spec, 7);
  const int n = 200000;
  int64_t tokens = 0;
  bool same = true;
  for (int i = 0; i < n; ++i) {
    const int32_t j = s.draw(spec->k);
    same = same && j == again.draw(spec->k);
    tokens += 1 + j;
  }
  const double expected = (1 - std::pow(a, spec->k + 1)) / (1 - a);  // 2.3056
  CHECK(static_cast<double>(tokens) / n == Approx(expected).margin(0.01));
  CHECK(1 + spec->expected_accepted() == Approx(expected));
  CHECK(same);  // the same seed draws the same
}

TEST_CASE("speculative: per-position rates and a distribution give the acceptance they state",
          "[sim][speculative]") {
  // Draft 1 always accepted, draft 2 never: exactly 2 tokens a verify.
  const Run pos = run(
      one_request("speculative: {method: ngram, k: 3, acceptance: {per_position: [1, 0, 1]}}\n"));
  CHECK(pos.stats.speculative->accepted_tokens == pos.stats.speculative->verifies);
  // Exactly 2 of 3 accepted every time: 1 + 3 + 3 tokens, then the last 2 with 1 draft, which
  // is accepted (the distribution's 2 capped at the 1 drafted).
  const Run dist = run(one_request(
      "speculative: {method: ngram, k: 3, acceptance: {distribution: [0, 0, 1, 0]}}\n"));
  CHECK(dist.stats.speculative->verifies == 3);
  CHECK(dist.stats.speculative->accepted_tokens == 2 + 2 + 1);
}

TEST_CASE("speculative: bad sections name the key and what is allowed", "[sim][speculative]") {
  const std::string base = trace_scenario("0,4,9\n", k_linear, k_vllm, k_kv);
  CHECK_THAT(input_error_of(base + "speculative: {method: ngram, k: 3, acceptance: "
                                   "{per_position: [1, 0]}}\n"),
             Catch::Contains("speculative.acceptance.per_position") &&
                 Catch::Contains("a list of 3 numbers from 0 to 1"));
  CHECK_THAT(input_error_of(base + "speculative: {method: ngram, k: 2, acceptance: "
                                   "{distribution: [0.5, 0.2, 0.2]}}\n"),
             Catch::Contains("must sum to 1"));
  CHECK_THAT(input_error_of(base + "speculative: {method: ngram, k: 0, acceptance: {rate: 1}}\n"),
             Catch::Contains("speculative.k") && Catch::Contains("from 1 to 64"));
  CHECK_THAT(input_error_of(base + "speculative: {method: medusa, k: 2, acceptance: {rate: 1}}\n"),
             Catch::Contains("draft, eagle, mtp, ngram"));
  CHECK_THAT(input_error_of(base + "speculative: {method: draft, k: 2, acceptance: {rate: 1}}\n"),
             Catch::Contains("proposer.step_time"));
  CHECK_THAT(input_error_of(base + "speculative: {method: eagle, k: 2, acceptance: {rate: 1}}\n"),
             Catch::Contains("target_layers"));
  CHECK_THAT(input_error_of(
                 trace_scenario("0,4,9\n", k_linear, "{kind: continuous, max_num_seqs: 4}", k_kv) +
                 "speculative: {method: ngram, k: 2, acceptance: {rate: 1}}\n"),
             Catch::Contains("needs a scheduler that plans speculative decoding"));
}

}  // namespace t_sim_speculative_test
