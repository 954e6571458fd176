// Admission and abandonment (sim/admission.h): hand-worked timelines of a timeout, a
// cancellation, a queue-cap rejection, a token-bucket shed and an SLO-aware rejection under a
// linear step model; every request ending exactly once with its KV back, under every scheduler;
// bad sections refused.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>

#include "metrics/output.h"
#include "schedulers/scheduler.h"
#include "tests/support.h"

namespace t_sim_admission_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// A trace (`header` then `rows`) on a 10 ms-a-step engine plus `extra` YAML sections.
std::vector<Request> run_trace(const std::string& header, const std::string& rows,
                               const std::string& scheduler, const std::string& extra,
                               const std::string& step_time = "{kind: linear, base_ms: 10}") {
  const std::string path = write_temp("trace.csv", header + "\n" + rows);
  return run_requests("workload: {trace: {path: " + path + "}}\nstep_time: " + step_time +
                      "\nscheduler: " + scheduler +
                      "\nkv: {policy: paged, capacity_tokens: 10000, block_size: 1}\n" + extra);
}

const std::string k_one_seat = "{kind: continuous, max_num_seqs: 1}";

}  // namespace

TEST_CASE("admission: a queued request times out at arrival + timeout_s, exactly",
          "[sim][admission]") {
  // One seat, 10 ms steps. r0 (t=0) prefills 0-10 ms (first token at 10) and decodes 10-50.
  // r1 (t=0) waits behind it; with timeout_s 0.025 it leaves at 25 ms, never admitted.
  const auto r = run_trace("arrival_s,prompt_tokens,output_tokens", "0,3,5\n0,3,5\n", k_one_seat,
                           "abandonment: {timeout_s: 0.025}\n");
  REQUIRE(r.size() == 2);
  CHECK(std::string(status_name(r[0])) == "finished");
  CHECK(r[0].release.count_ns() == ms(50));
  CHECK(std::string(status_name(r[1])) == "timed_out");
  CHECK(r[1].release.count_ns() == ms(25));
  CHECK(r[1].first_token == Time::max());
  CHECK(r[1].first_admitted == Time::max());
  CHECK(r[1].kv_held_tokens == 0);
}

TEST_CASE("admission: a request prefilling at its timeout leaves at that step's end, KV freed",
          "[sim][admission]") {
  // Chunks of 4 tokens: r0's prompt of 12 prefills in steps 0-10, 10-20, 20-30 ms. Its timeout
  // (15 ms) falls inside the step 10-20, which includes it: the engine aborts it at 20 ms, with
  // 8 tokens of KV freed then (the check mode holds KV use to what running requests hold).
  // r1 (t=0.021) then runs alone: prefill 21-31 ms, a decode 31-41 ms.
  const auto r = run_trace("arrival_s,prompt_tokens,output_tokens", "0,12,3\n0.021,2,2\n",
                           "{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 4, "
                           "chunked_prefill: true}",
                           "abandonment: {timeout_s: 0.015}\n");
  REQUIRE(r.size() == 2);
  CHECK(std::string(status_name(r[0])) == "timed_out");
  CHECK(r[0].release.count_ns() == ms(20));
  CHECK(r[0].generated_tokens == 0);
  CHECK(r[0].kv_held_tokens == 0);
  CHECK(std::string(status_name(r[1])) == "finished");
  CHECK(r[1].first_token.count_ns() == ms(31));
  CHECK(r[1].release.count_ns() == ms(41));
}

TEST_CASE("admission: a cancellation ends a request mid-generation after its tokens",
          "[sim][admission]") {
  // r0 (prompt 3, 10 tokens, cancel_after_tokens 4): first token at 10 ms, then one a step:
  // its 4th at 40 ms, where it leaves cancelled. r1 has an empty cell: it runs to its end.
  const auto r = run_trace("arrival_s,prompt_tokens,output_tokens,cancel_after_tokens",
                           "0,3,10,4\n0.1,3,2,\n", k_one_seat, "");
  REQUIRE(r.size() == 2);
  CHECK(std::string(status_name(r[0])) == "cancelled");
  CHECK(r[0].first_token.count_ns() == ms(10));
  CHECK(r[0].generated_tokens == 4);
  CHECK(r[0].release.count_ns() == ms(40));
  CHECK(r[0].kv_held_tokens == 0);
  CHECK(std::string(status_name(r[1])) == "finished");
  const std::string csv = requests_csv(r);
  // Its row keeps its TTFT and the time it left; TPOT and finish are empty.
  CHECK_THAT(csv, Catch::Contains("\n0,0.000000000,3,10,0.010000000,,0.040000000,0.010000000,,"
                                  "0.040000000,0.000000000,0,cancelled,\"cancelled by its "
                                  "client after 4 of 10 tokens\",,0,,\n"));
}

TEST_CASE("admission: queue_cap rejects an arrival finding the queue full", "[sim][admission]") {
  // One seat. At t=0 r0 queues (the queue is empty) and r1 finds it holding r0: rejected at 0.
  // At 5 ms r0 runs (admitted at 0) and the queue is empty again: r2 queues and runs at 20 ms.
  const auto r = run_trace("arrival_s,prompt_tokens,output_tokens", "0,3,2\n0,3,2\n0.005,3,2\n",
                           k_one_seat, "admission: {queue_cap: 1}\n");
  REQUIRE(r.size() == 3);
  CHECK(std::string(status_name(r[0])) == "finished");
  CHECK(std::string(status_name(r[1])) == "rejected");
  CHECK(r[1].release.count_ns() == 0);
  CHECK_THAT(r[1].reject_reason, Catch::Contains("admission.queue_cap: 1 requests already queued"));
  CHECK(std::string(status_name(r[2])) == "finished");
  CHECK(r[2].first_token.count_ns() == ms(30));
}

TEST_CASE("admission: the token bucket passes a burst, then its rate, and sheds the rest",
          "[sim][admission]") {
  // 10 a second, burst 2. At t=0 three arrive: two tokens, the third is shed. At 50 ms the
  // bucket has 0.5: shed. At 100 ms it has 1.0: admitted.
  const auto r =
      run_trace("arrival_s,prompt_tokens,output_tokens", "0,3,2\n0,3,2\n0,3,2\n0.05,3,2\n0.1,3,2\n",
                "{kind: continuous, max_num_seqs: 8}",
                "admission: {rate_limit: {rate_per_s: 10, burst: 2}}\n");
  REQUIRE(r.size() == 5);
  std::string statuses;
  for (const Request& q : r) statuses += std::string(status_name(q)) + " ";
  CHECK(statuses == "finished finished shed shed finished ");
  CHECK(r[3].release.count_ns() == ms(50));
}

TEST_CASE("admission: the token bucket is per tenant", "[sim][admission]") {
  // Burst 1, 1 a second: a and b each pass one request at t=0; a's second is shed.
  const auto r = run_trace("arrival_s,prompt_tokens,output_tokens,tenant",
                           "0,3,2,a\n0,3,2,b\n0,3,2,a\n", "{kind: continuous, max_num_seqs: 8}",
                           "admission: {rate_limit: {rate_per_s: 1, burst: 1}}\n");
  REQUIRE(r.size() == 3);
  CHECK(std::string(status_name(r[1])) == "finished");
  CHECK(std::string(status_name(r[2])) == "shed");
  // requests.csv names each row's tenant (the last column) and says which was shed.
  const std::string csv = requests_csv(r, {}, {"a", "b"});
  CHECK_THAT(csv, Catch::Contains(",finished,,,0,0.010000000,b\n"));
  CHECK_THAT(csv, Catch::Contains(",shed,\"shed: its tenant's rate limit (1 a second, burst 1) "
                                  "has no token\",,0,,a\n"));
}

TEST_CASE(
    "admission: slo_reject refuses what one prefill step of the tokens ahead puts past "
    "its TTFT target",
    "[sim][admission]") {
  // Step = 10 ms + 1 ms a prefill token; target 25 ms. r0 (10 tokens): 10 + 10 = 20 ms: queued.
  // r1 (10): r0's 10 ahead plus its own: 30 ms > 25: rejected. r2 (5): 10 + 15 = 25 ms: queued.
  const auto r = run_trace("arrival_s,prompt_tokens,output_tokens", "0,10,2\n0,10,2\n0,5,2\n",
                           "{kind: continuous, max_num_seqs: 8}",
                           "admission: {slo_reject: true}\nslo: {ttft_ms: 25}\n",
                           "{kind: linear, base_ms: 10, per_prefill_token_ms: 1}");
  REQUIRE(r.size() == 3);
  CHECK(std::string(status_name(r[0])) == "finished");
  CHECK(std::string(status_name(r[1])) == "rejected");
  CHECK_THAT(r[1].reject_reason, Catch::Contains("estimated TTFT 30 ms"));
  CHECK(std::string(status_name(r[2])) == "finished");
}

TEST_CASE("admission: every request ends exactly once with its KV back, under every scheduler",
          "[sim][admission]") {
  const std::map<std::string, std::string> sections{
      {"continuous",
       "{kind: continuous, max_num_seqs: 6, max_num_batched_tokens: 96, "
       "chunked_prefill: true}"},
      {"dynamic", "{kind: dynamic, max_batch_size: 6, max_queue_delay_ms: 20}"},
      {"orca", "{kind: orca, max_batch_size: 6}"},
      {"sarathi", "{kind: sarathi, max_batch_size: 6, token_budget: 96}"},
      {"sglang", "{kind: sglang, max_running_requests: 6, chunked_prefill_size: 64}"},
      {"static", "{kind: static, max_batch_size: 6}"},
      {"trtllm", "{kind: trtllm, max_batch_size: 6, max_num_tokens: 96}"},
      {"vllm",
       "{kind: vllm, max_num_seqs: 6, max_num_batched_tokens: 96, "
       "enable_prefix_caching: false}"},
      {"vllm-v0",
       "{kind: vllm, version: \"0.6.6\", num_scheduler_steps: 4, max_num_seqs: 6, "
       "max_num_batched_tokens: 512}"},
  };
  for (const std::string& name : scheduler_names()) {
    INFO(name);
    CHECK((sections.count(name) > 0 || name == "vllm-v0"));
  }
  for (const auto& [name, scheduler] : sections) {
    INFO(name);
    // Heavy load on a small KV; every admission and abandonment feature on at once. The check
    // mode holds KV use to what running requests hold at every step and to 0 at the end.
    const std::vector<Request> r = run_requests(fmt::format(
        "workload: {{synthetic: {{requests: 150, arrival: {{kind: poisson, rate_per_s: 60}},\n"
        "  prompt_tokens: {{kind: lognormal, median: 60, sigma: 0.8, max: 400}},\n"
        "  output_tokens: {{kind: uniform, min: 1, max: 200}}}}}}\n"
        "step_time: {{kind: linear, base_ms: 5, per_seq_ms: 0.2, per_prefill_token_ms: 0.02}}\n"
        "scheduler: {}\nkv: {{policy: paged, capacity_tokens: 1200, block_size: 16}}\n"
        "slo: {{ttft_ms: 400}}\n"
        "admission: {{queue_cap: 12, rate_limit: {{rate_per_s: 50, burst: 10}}, "
        "slo_reject: true}}\n"
        "abandonment: {{timeout_s: 0.3, cancel: {{fraction: 0.2}}}}\n",
        scheduler));
    REQUIRE(r.size() == 150);
    std::map<std::string, int> n;
    for (size_t i = 0; i < r.size(); ++i) {
      CHECK(r[i].spec.id == i);  // each recorded once
      CHECK(r[i].kv_held_tokens == 0);
      ++n[status_name(r[i])];
    }
    CHECK(n["unfinished"] == 0);
    CHECK(n["finished"] + n["rejected"] + n["shed"] + n["timed_out"] + n["cancelled"] == 150);
    CHECK(n["finished"] > 0);
    CHECK(n["shed"] > 0);
    CHECK(n["cancelled"] > 0);
  }
}

TEST_CASE("admission: bad sections are refused naming the key and what is allowed",
          "[sim][admission]") {
  const std::string base =
      trace_scenario("0,3,2\n", "{kind: linear, base_ms: 1}", "{kind: continuous, max_num_seqs: 2}",
                     "{policy: paged, capacity_tokens: 100}");
  CHECK_THAT(input_error_of(base + "admission: {queue_cap: -1}\n"),
             Catch::Contains("admission.queue_cap"));
  CHECK_THAT(input_error_of(base + "admission: {rate_limit: {burst: 2}}\n"),
             Catch::Contains("admission.rate_limit.rate_per_s"));
  CHECK_THAT(input_error_of(base + "admission: {rate_limit: {rate_per_s: 1, burst: 0.5}}\n"),
             Catch::Contains("admission.rate_limit.burst"));
  CHECK_THAT(input_error_of(base + "admission: {slo_reject: maybe}\n"),
             Catch::Contains("admission.slo_reject"));
  CHECK_THAT(input_error_of(base + "abandonment: {timeout_s: 0}\n"),
             Catch::Contains("abandonment.timeout_s"));
  CHECK_THAT(input_error_of(base + "abandonment: {cancel: {fraction: 1.5}}\n"),
             Catch::Contains("abandonment.cancel.fraction"));
  CHECK_THAT(input_error_of(base + "abandonment: {timeout: 3}\n"),
             Catch::Contains("abandonment.timeout"));
  const std::string path = write_temp("bad.yaml", base + "admission: {queue_cap: 0.5}\n");
  const CliResult c = cli({"run", path, "--no-progress", "--out", temp_dir().string()});
  CHECK(c.code == 2);
  CHECK_THAT(c.err, Catch::Contains("admission.queue_cap"));
}

}  // namespace t_sim_admission_test
