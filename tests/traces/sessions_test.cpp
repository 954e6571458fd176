// Sessions, dependency graphs and closed-loop users: requests whose arrival depends on when
// others leave the engine (traces/dependent_trace.cpp, traces/closed_loop.cpp). Times are
// worked out by hand from a step model with a fixed 10 ms step.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "core/errors.h"
#include "tests/support.h"

namespace t_traces_sessions_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const char* k_engine =
    "step_time: {kind: linear, base_ms: 10}\n"
    "scheduler: {kind: continuous, max_num_seqs: 4}\n";

std::string trace_run(const std::string& csv,
                      const std::string& kv = "{policy: reserve, capacity_tokens: 100000}") {
  const std::string path = write_temp("sessions.csv", csv);
  return "workload: {trace: {path: " + path + "}}\n" + k_engine + "kv: " + kv + "\n";
}

}  // namespace

TEST_CASE("sessions: a turn arrives its think time after the previous reply, with the context",
          "[traces]") {
  // a1 arrives at 0: prefill step [0, 10 ms) gives token 1, a decode [10, 20) token 2, and it is
  // released at 20 ms. b1 (1 ms) is prefilled in the step [10, 20) and released at 20 ms too.
  // a2 waits for a1: it arrives at 20 ms + 1.5 s, and its prompt is a1's 10 + 2 tokens plus
  // its own 5. Its arrival_s 0 is only a lower bound.
  const auto reqs =
      run_requests(trace_run("arrival_s,prompt_tokens,output_tokens,session_id,think_s\n"
                             "0,10,2,a,\n"
                             "0,5,3,a,1.5\n"
                             "0.001,7,1,b,\n"));
  REQUIRE(reqs.size() == 3);
  const Request &a1 = reqs[0], &a2 = reqs[1], &b1 = reqs[2];
  CHECK(a1.release == Time::from_ms(20));
  CHECK(b1.release == Time::from_ms(20));
  CHECK(a2.spec.arrival == Time::from_ms(1520));
  CHECK(a2.spec.prompt_tokens == 17);
  CHECK(a2.first_token == Time::from_ms(1530));
  CHECK(a2.release == Time::from_ms(1550));
  CHECK(a1.spec.content_stream != 0);
  CHECK(a2.spec.content_stream == a1.spec.content_stream);
  CHECK(b1.spec.content_stream != a1.spec.content_stream);
  CHECK(a2.spec.session == a1.spec.session);
}

TEST_CASE("sessions: a turn rejected at arrival releases the next turn, and no other request",
          "[traces]") {
  // Without chunked prefill and a 30-token budget, a2's prompt (a1's 10 + 2 tokens and its own
  // 20: 32) can never be scheduled: it is rejected when it arrives (20 ms + 100 ms), while b2
  // and c2 wait in the ready queue. Its rejection releases a3 (120 ms + 50 ms, prompt 32 + 3:
  // rejected too). Every request is recorded once; b2 and c2 arrive their think times after
  // b1's and c1's replies (10 ms: one prefill step, one token each).
  const std::string kv = "{policy: reserve, capacity_tokens: 100000}";
  const std::string csv =
      "arrival_s,prompt_tokens,output_tokens,session_id,think_s\n"
      "0,10,2,a,\n"
      "0,20,2,a,0.1\n"
      "0,3,1,a,0.05\n"
      "0.0001,5,1,b,\n"
      "0,5,1,b,5\n"
      "0.0002,5,1,c,\n"
      "0,5,1,c,6\n";
  const std::string yaml = "workload: {trace: {path: " + write_temp("rejected.csv", csv) +
                           "}}\nstep_time: {kind: linear, base_ms: 10}\n"
                           "scheduler: {kind: continuous, max_num_seqs: 4, "
                           "max_num_batched_tokens: 30, chunked_prefill: false}\n"
                           "kv: " +
                           kv + "\n";
  const auto reqs = run_requests(yaml);
  REQUIRE(reqs.size() == 7);
  for (size_t i = 0; i < reqs.size(); ++i) CHECK(reqs[i].spec.id == i);
  CHECK(reqs[0].state == RequestState::Released);
  CHECK(reqs[1].state == RequestState::Rejected);
  CHECK(reqs[1].spec.arrival == Time::from_ms(120));
  CHECK(reqs[2].state == RequestState::Rejected);
  CHECK(reqs[2].spec.arrival == Time::from_ms(170));
  CHECK(reqs[4].state == RequestState::Released);
  CHECK(reqs[4].spec.arrival == reqs[3].release + Time::from_seconds(5));
  CHECK(reqs[6].state == RequestState::Released);
  CHECK(reqs[6].spec.arrival == reqs[5].release + Time::from_seconds(6));
}

TEST_CASE("sessions: a request waits for all its parents, and no earlier than its arrival_s",
          "[traces]") {
  // p (id 10) is released at 10 ms (1 token); q (id 11) at 20 ms (2 tokens). c waits for both:
  // 20 ms + 0.25 s. d waits for p only, with arrival_s 3: it arrives at 3 s.
  const auto reqs =
      run_requests(trace_run("request_id,arrival_s,prompt_tokens,output_tokens,parent_id,think_s\n"
                             "10,0,4,1,,\n"
                             "11,0,4,2,,\n"
                             "12,0,4,1,10;11,0.25\n"
                             "13,3,4,1,10,\n"));
  REQUIRE(reqs.size() == 4);
  CHECK(reqs[0].release == Time::from_ms(10));
  CHECK(reqs[1].release == Time::from_ms(20));
  CHECK(reqs[2].spec.arrival == Time::from_ms(270));
  CHECK(reqs[2].spec.prompt_tokens == 4);  // not a session: the prompt is as written
  CHECK(reqs[3].spec.arrival == Time::from_ms(3000));
}

TEST_CASE("sessions: turns reuse the conversation's cached blocks", "[traces]") {
  // Turn 1 holds 40 + 10 - 1 = 49 KV tokens: 3 full 16-token blocks, cached. Turn 2's prompt
  // is those 50 tokens plus 20: its first 48 tokens hit.
  const std::string csv =
      "arrival_s,prompt_tokens,output_tokens,session_id,think_s\n"
      "0,40,10,s,1\n"
      "0,20,5,s,1\n";
  const auto reqs = run_requests(trace_run(
      csv, "{policy: paged, block_size: 16, prefix_caching: true, capacity_tokens: 4096}"));
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[1].spec.prompt_tokens == 70);
  CHECK(reqs[0].cached_prompt_tokens == 0);
  CHECK(reqs[1].cached_prompt_tokens == 48);
  const auto cold =
      run_requests(trace_run(csv, "{policy: paged, block_size: 16, capacity_tokens: 4096}"));
  CHECK(cold[1].cached_prompt_tokens == 0);
  CHECK(cold[1].first_token >
        reqs[1].first_token - Time::from_ms(1));  // never faster without the cache
}

TEST_CASE("sessions: under KV pressure no turn starts before the previous reply", "[traces]") {
  // 60 sessions of 4 turns with varied lengths, a KV cache small enough to preempt, and prefix
  // caching: every turn arrives think_s after its predecessor's release, and is admitted after
  // it arrives.
  std::string csv = "arrival_s,prompt_tokens,output_tokens,session_id,think_s\n";
  for (int s = 0; s < 60; ++s)
    for (int t = 0; t < 4; ++t)
      csv += fmt::format("{:.3f},{},{},user{},{}\n", t == 0 ? 0.05 * s : 0.0,
                         20 + (s * 7 + t * 13) % 90, 5 + (s * 3 + t * 5) % 40, s,
                         t == 0 ? 0.0 : 0.1 * (t + s % 3));
  const auto reqs = run_requests(trace_run(
      csv, "{policy: paged, block_size: 16, prefix_caching: true, capacity_tokens: 1200}"));
  REQUIRE(reqs.size() == 240);
  int preempted = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const Request& r = reqs[i];
    preempted += r.preemptions > 0;
    REQUIRE(r.state == RequestState::Released);
    CHECK(r.first_admitted >= r.spec.arrival);
    if (i % 4 == 0) continue;
    const Request& prev = reqs[i - 1];
    const int t = static_cast<int>(i % 4), s = static_cast<int>(i / 4);
    CHECK(r.spec.arrival == prev.release + Time::from_seconds(0.1 * (t + s % 3)));
    CHECK(r.spec.prompt_tokens ==
          prev.spec.prompt_tokens + prev.spec.output_tokens + 20 + (s * 7 + t * 13) % 90);
  }
  CHECK(preempted > 0);  // the test exercises recompute after preemption
}

TEST_CASE("sessions: missing parents, repeated ids and cycles are input errors", "[traces]") {
  const std::string head = "request_id,arrival_s,prompt_tokens,output_tokens,parent_id\n";
  CHECK_THAT(input_error_of(trace_run(head + "1,0,4,1,\n2,0,4,1,7\n")),
             Catch::Contains("sessions.csv:3: column parent_id names 7, which is not the "
                             "request_id of any row"));
  CHECK_THAT(input_error_of(trace_run(head + "1,0,4,1,\n1,0,4,1,\n")),
             Catch::Contains("sessions.csv:3: request_id 1 is already the id of line 2"));
  CHECK_THAT(input_error_of(trace_run(head + "1,0,4,1,3\n2,0,4,1,1\n3,0,4,1,2\n4,0,4,1,\n")),
             Catch::Contains("the dependencies form a cycle"));
  CHECK_THAT(input_error_of(trace_run(head + "1,0,4,1,\n2,0,4,1,2\n")),
             Catch::Contains("sessions.csv:3: request 2 waits for itself"));
  CHECK_THAT(input_error_of(trace_run(head + "1,0,4,1,x\n")),
             Catch::Contains("column parent_id = \"x\": must be non-negative integers"));
  // Without request_id, parents are row numbers.
  CHECK_THAT(input_error_of(
                 trace_run("arrival_s,prompt_tokens,output_tokens,parent_id\n0,4,1,\n0,4,1,5\n")),
             Catch::Contains("without a request_id column, parents are 0-based row numbers"));
  // A transform would cut requests that others wait for.
  const std::string path = write_temp("s.csv", head + "1,0,4,1,\n2,0,4,1,1\n");
  CHECK_THAT(
      input_error_of("workload: {trace: {path: " + path + "}, transform: {rate_scale: 2}}\n" +
                     k_engine + "kv: {policy: reserve, capacity_tokens: 1000}\n"),
      Catch::Contains("cannot reshape a workload whose requests wait for others"));
}

TEST_CASE("servesim CSV: prefix_hash gives block hashes to the prefix cache", "[traces]") {
  // Two requests share their first two 16-token blocks (hashes 7;8): the second hits 32 tokens.
  const std::string path = write_temp("hashes.csv",
                                      "arrival_s,prompt_tokens,output_tokens,prefix_hash\n"
                                      "0,40,1,7;8;9\n"
                                      "1,40,1,7 8 10\n");
  const auto reqs = run_requests(
      "workload: {trace: {path: " + path + ", hash_block_tokens: 16}}\n" + k_engine +
      "kv: {policy: paged, block_size: 16, prefix_caching: true, capacity_tokens: 4096}\n");
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[1].cached_prompt_tokens == 32);
  CHECK_THAT(
      input_error_of(trace_run("arrival_s,prompt_tokens,output_tokens,prefix_hash\n0,40,1,1;2\n")),
      Catch::Contains("sessions.csv:2: column prefix_hash has 2 hashes, more than the 1 "
                      "blocks of 512 tokens"));
}

TEST_CASE("sessions: a turn's cached context follows its session, not the rows' block hashes",
          "[traces]") {
  // a2's prompt is a1's 32 + 2 tokens and its own 5: its first two 16-token blocks are a1's
  // prompt, cached under the session's content, whatever hashes the rows give (a1's 1;2, a2's
  // 9, which match nothing) or none at all.
  const std::string engine =
      std::string(k_engine) +
      "kv: {policy: paged, block_size: 16, prefix_caching: true, capacity_tokens: 4096}\n";
  const auto cached = [&](const std::string& hashes_a1, const std::string& hashes_a2) {
    const std::string path = write_temp("turns.csv",
                                        "arrival_s,prompt_tokens,output_tokens,session_id,think_s,"
                                        "prefix_hash\n0,32,2,a,," +
                                            hashes_a1 + "\n0,5,1,a,1," + hashes_a2 + "\n");
    const auto reqs =
        run_requests("workload: {trace: {path: " + path + ", hash_block_tokens: 16}}\n" + engine);
    REQUIRE(reqs.size() == 2);
    REQUIRE(reqs[1].spec.prompt_tokens == 39);
    return reqs[1].cached_prompt_tokens;
  };
  CHECK(cached("", "") == 32);
  CHECK(cached("1;2", "9") == 32);
}

TEST_CASE("closed loop: each user sends its next request a think time after the reply",
          "[traces]") {
  const std::string yaml =
      "workload: {closed_loop: {users: 3, requests: 30, think_s: 0.5, think: fixed,\n"
      "  ramp_s: 0.03, prompt_tokens: {kind: uniform, min: 10, max: 50},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 20}}}\n" +
      std::string(k_engine) + "kv: {policy: reserve, capacity_tokens: 100000}\n";
  const auto reqs = run_requests(yaml);
  REQUIRE(reqs.size() == 30);
  CHECK(reqs[0].spec.arrival == Time::from_ms(0));
  CHECK(reqs[1].spec.arrival == Time::from_ms(10));
  CHECK(reqs[2].spec.arrival == Time::from_ms(20));
  // Replay the users: a request's arrival is 0.5 s after some earlier reply, and at any time
  // at most 3 requests are in flight.
  std::multiset<Time> releases;
  for (const Request& r : reqs) releases.insert(r.release);
  std::vector<std::pair<Time, int>> edges;
  for (const Request& r : reqs) {
    edges.emplace_back(r.spec.arrival, +1);
    edges.emplace_back(r.release, -1);
    if (r.spec.id >= 3) CHECK(releases.count(r.spec.arrival - Time::from_ms(500)) >= 1);
  }
  std::sort(edges.begin(), edges.end());  // a release sorts before an arrival at one instant
  int in_flight = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, in_flight += d);
  CHECK(most == 3);
  CHECK(run_requests(yaml)[29].release == reqs[29].release);  // deterministic
}

TEST_CASE("closed loop: conversations grow their prompts, and static batching does not stall",
          "[traces]") {
  // Two users, turns of 3: a turn's prompt is the conversation so far plus 8 new tokens.
  // Static batching with batches of 8 never sees 8 requests: it runs what it has whenever no
  // arrival is known to be coming.
  const auto reqs = run_requests(
      "workload: {closed_loop: {users: 2, requests: 12, think_s: 0.2, turns: 3,\n"
      "  prompt_tokens: {kind: fixed, value: 8}, output_tokens: {kind: fixed, value: 4}}}\n"
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: static, max_batch_size: 8}\n"
      "kv: {policy: reserve, capacity_tokens: 100000}\n");
  REQUIRE(reqs.size() == 12);
  std::map<uint64_t, std::vector<int32_t>> prompts;  // by conversation
  for (const Request& r : reqs) {
    CHECK(r.state == RequestState::Released);
    prompts[r.spec.content_stream].push_back(r.spec.prompt_tokens);
  }
  REQUIRE(prompts.size() == 4);
  for (const auto& [stream, p] : prompts) CHECK(p == std::vector<int32_t>{8, 20, 32});
}

}  // namespace t_traces_sessions_test
