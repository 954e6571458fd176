// Decode streaks (sim/decode_streak.h): steps in which every running request decodes run
// without touching the requests, and change no result.
#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/grow_array.h"
#include "metrics/metrics.h"
#include "schedulers/scheduler.h"
#include "sim/recorder.h"
#include "sim/simulation.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_sim_decode_streak_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// A replica's books from two runs, figure by figure.
void same_replica_books(const ReplicaStats& x, const ReplicaStats& y) {
  CHECK(x.steps == y.steps);
  CHECK(x.busy_ns == y.busy_ns);
  CHECK(x.seat_steps == y.seat_steps);
  CHECK(x.costed_steps == y.costed_steps);
  CHECK(x.bandwidth_bound_steps == y.bandwidth_bound_steps);
  CHECK(x.active_s == y.active_s);
  CHECK(x.bytes_moved == y.bytes_moved);
  CHECK(x.flops == y.flops);
  CHECK(x.peak_kv_used_tokens == y.peak_kv_used_tokens);
}

// The same scheduler without its promise (Scheduler::repeat_decode_limit 0): every step is
// planned and credited request by request.
class NoStreaks final : public Scheduler {
 public:
  explicit NoStreaks(std::unique_ptr<Scheduler> inner) : m_inner(std::move(inner)) {}
  void plan_step(SchedulerView& s) override { m_inner->plan_step(s); }
  void after_step(SchedulerView& s) override { m_inner->after_step(s); }
  int64_t max_running() const override { return m_inner->max_running(); }
  bool priority_order() const override { return m_inner->priority_order(); }
  int64_t queue_key(const Request& r) const override { return m_inner->queue_key(r); }

 private:
  std::unique_ptr<Scheduler> m_inner;
};

// The same scheduler with its streak promises but preempts_newest: a streak step short of KV
// goes the ordinary way (suspended, then taken up again).
class NoStreakPreemption final : public Scheduler {
 public:
  explicit NoStreakPreemption(std::unique_ptr<Scheduler> inner) : m_inner(std::move(inner)) {}
  void plan_step(SchedulerView& s) override { m_inner->plan_step(s); }
  void after_step(SchedulerView& s) override { m_inner->after_step(s); }
  int64_t max_running() const override { return m_inner->max_running(); }
  bool priority_order() const override { return m_inner->priority_order(); }
  int64_t queue_key(const Request& r) const override { return m_inner->queue_key(r); }
  int64_t repeat_decode_limit() const override { return m_inner->repeat_decode_limit(); }
  bool admits_nothing(SchedulerView& s) const override { return m_inner->admits_nothing(s); }
  bool plan_admissions(SchedulerView& s, int64_t decodes) override {
    return m_inner->plan_admissions(s, decodes);
  }

 private:
  std::unique_ptr<Scheduler> m_inner;
};

/// Keeps every step's end; sets `*flag` at the first step end at or past `at` (an interrupt
/// that comes during a run, as a signal would).
class StepEndsSeen final : public StepObserver {
 public:
  void on_step(const StepRecord& s) override { ends.push_back(s.start + s.duration); }
  std::vector<Time> ends;
  volatile std::sig_atomic_t* flag = nullptr;
  Time at = Time::max();
  void on_step_end(uint32_t, Time end, int64_t) override {
    ends.push_back(end);
    if (flag && end >= at) *flag = 1;
  }
  [[nodiscard]] bool ends_only() const override { return true; }
};

/// The scenario of `yaml`; with `streaks` false its schedulers lose their promise (NoStreaks).
Components components_of(const std::string& yaml, bool streaks) {
  Scenario sc = build_scenario(doc_of(yaml));
  if (!streaks)
    for (ReplicaParts& p : sc.components.replicas)
      p.scheduler = std::make_unique<NoStreaks>(std::move(p.scheduler));
  return std::move(sc.components);
}

/// run() with streaks whose steps short of KV go the ordinary way (NoStreakPreemption).
CheckedRun run_suspending(const std::string& yaml) {
  Scenario sc = build_scenario(doc_of(yaml));
  for (ReplicaParts& p : sc.components.replicas)
    p.scheduler = std::make_unique<NoStreakPreemption>(std::move(p.scheduler));
  Simulation sim(std::move(sc.components), /*check=*/true, RunLimits{});
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  return {rec.by_id(), sim.stats()};
}

CheckedRun run(const std::string& yaml, bool streaks, RunLimits limits = {},
               StepEndsSeen* seen = nullptr) {
  Simulation sim(components_of(yaml, streaks), /*check=*/true, limits);
  if (seen) sim.add_step_observer(*seen);
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  return {rec.by_id(), sim.stats()};
}

std::string scenario(const std::string& kv, bool chunked = true) {
  return "workload: {synthetic: {requests: 60, arrival: {kind: poisson, rate_per_s: 40},\n"
         "  prompt_tokens: {kind: uniform, min: 1, max: 90},\n"
         "  output_tokens: {kind: uniform, min: 1, max: 120}}}\n"
         "step_time: {kind: roofline, model: llama-2-7b, hardware: a100-80gb, weight_dtype: fp16}\n"
         "scheduler: {kind: continuous, max_num_seqs: 16, max_num_batched_tokens: 96,\n"
         "  chunked_prefill: " +
         std::string(chunked ? "true" : "false") +
         "}\n"
         "kv: " +
         kv + "\nseed: 3\n";
}

void same_results(const CheckedRun& a, const CheckedRun& b) {
  REQUIRE(a.requests.size() == b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    const Request& x = a.requests[i];
    const Request& y = b.requests[i];
    INFO("request " << x.spec.id);
    CHECK(x.generated_tokens == y.generated_tokens);
    CHECK(x.context_tokens == y.context_tokens);
    CHECK(x.preemptions == y.preemptions);
    CHECK(x.first_token == y.first_token);
    CHECK(x.last_token == y.last_token);
    CHECK(x.finish == y.finish);
    CHECK(x.release == y.release);
  }
  CHECK(a.stats.steps == b.stats.steps);
  CHECK(a.stats.busy_ns == b.stats.busy_ns);
  CHECK(a.stats.seat_steps == b.stats.seat_steps);
  CHECK(a.stats.peak_kv_used_tokens == b.stats.peak_kv_used_tokens);
  CHECK(a.stats.end == b.stats.end);
  CHECK(a.stats.stopped_by == b.stats.stopped_by);
}

/// The same ITL figures, to the bit.
void same_itl(const GapDistribution& got, const GapDistribution& want) {
  CHECK(got.count == want.count);
  CHECK(got.mean == want.mean);
  CHECK(got.std == want.std);
  CHECK(got.p50 == want.p50);
  CHECK(got.p90 == want.p90);
  CHECK(got.p99 == want.p99);
  CHECK(got.max == want.max);
}

/// A run of the CSV trace `csv` (written as `name`) on a 5 ms step plus 1 ms a prefill token,
/// continuous batching of 4 and a paged KV of 4,096 tokens.
std::string csv_trace_run(const std::string& name, const std::string& csv) {
  return "workload: {trace: {path: " + write_temp(name, csv) +
         "}}\n"
         "step_time: {kind: linear, base_ms: 5, per_prefill_token_ms: 1}\n"
         "scheduler: {kind: continuous, max_num_seqs: 4}\n"
         "kv: {policy: paged, capacity_tokens: 4096, block_size: 16}\n";
}

}  // namespace

TEST_CASE("decode streak: runs of decode steps give the results of planning every step",
          "[sim][streak]") {
  // Block sizes where a request crosses a block boundary every step, every few steps, and
  // rarely; KV ample.
  for (const char* block : {"1", "16", "64"}) {
    INFO("block_size " << block);
    const std::string yaml = scenario(
        std::string("{policy: paged, capacity_tokens: 100000, block_size: ") + block + "}");
    const CheckedRun with = run(yaml, true);
    const CheckedRun without = run(yaml, false);
    CHECK(with.stats.streak_steps > with.stats.steps / 4);
    CHECK(without.stats.streak_steps == 0);
    same_results(with, without);
  }
}

TEST_CASE("decode streak: a lone request's streak covers every decode", "[sim][streak]") {
  // One request of n output tokens: its prefill (token 1) is an ordinary step; the streak is
  // captured at the next step with n - 1 tokens left and runs until the request produces its
  // last, so tokens 2 .. n (n - 1 steps) come from it; the request leaves at that step's end.
  for (const int n : {2, 3, 4, 10}) {
    INFO("output tokens " << n);
    const std::string yaml = trace_scenario(
        "0,8," + std::to_string(n) + "\n", "{kind: linear, base_ms: 5, per_prefill_token_ms: 1}",
        "{kind: continuous, max_num_seqs: 4}",
        "{policy: paged, capacity_tokens: 4096, block_size: 16}");
    const CheckedRun with = run(yaml, true);
    const CheckedRun without = run(yaml, false);
    CHECK(with.stats.steps == n);
    CHECK(with.stats.streak_steps == n - 1);
    REQUIRE(with.requests.size() == 1);
    CHECK(with.requests[0].finish == Time::from_ms(13.0 + 5.0 * (n - 1)));
    same_results(with, without);
  }
}

TEST_CASE("decode streak: at its limits, a one-token budget and blocks of 4,096 tokens",
          "[sim][streak]") {
  // The streak takes a batch no larger than the scheduler's token budget (here 1: the lone
  // request's decode) and blocks of at most 4,096 tokens; past that every step is planned.
  const auto lone = [](const std::string& sched, const std::string& kv) {
    return trace_scenario("0,1,6\n", "{kind: linear, base_ms: 5, per_prefill_token_ms: 1}", sched,
                          kv);
  };
  const std::string budget_one = "{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 1}";
  const std::string small_blocks = "{policy: paged, capacity_tokens: 4096, block_size: 16}";
  for (const auto& [sched, kv, streak_steps] :
       {std::tuple{budget_one, small_blocks, 5},
        std::tuple{std::string("{kind: continuous, max_num_seqs: 4}"),
                   std::string("{policy: paged, capacity_tokens: 8192, block_size: 4096}"), 5},
        std::tuple{std::string("{kind: continuous, max_num_seqs: 4}"),
                   std::string("{policy: paged, capacity_tokens: 8194, block_size: 4097}"), 0}}) {
    INFO(sched << " " << kv);
    const CheckedRun with = run(lone(sched, kv), true);
    CHECK(with.stats.steps == 6);
    CHECK(with.stats.streak_steps == streak_steps);
    REQUIRE(with.requests.size() == 1);
    CHECK(with.requests[0].finish == Time::from_ms(6.0 + 5.0 * 5));
    same_results(with, run(lone(sched, kv), false));
  }
}

TEST_CASE("decode streak: a member that finishes leaves, the others stay captured",
          "[sim][streak]") {
  // Three 8-token prompts at 0 with 3, 5 and 12 output tokens: one prefill step of 5 + 24 ms
  // gives each its first token at 29 ms; then 5 ms decode steps, all in one streak: A's last
  // token at 39 ms, B's at 49 ms, C's at 29 + 11 x 5 = 84 ms. C, alone by then, needs its
  // second block (16 tokens each) at its 9th decode. Before a streak outlived a finish, the
  // three finishing steps were ordinary ones (8 streak steps).
  const std::string yaml = trace_scenario("0,8,3\n0,8,5\n0,8,12\n",
                                          "{kind: linear, base_ms: 5, per_prefill_token_ms: 1}",
                                          "{kind: continuous, max_num_seqs: 4}",
                                          "{policy: paged, capacity_tokens: 4096, block_size: 16}");
  const CheckedRun with = run(yaml, true);
  REQUIRE(with.requests.size() == 3);
  CHECK(with.stats.steps == 12);
  CHECK(with.stats.streak_steps == 11);
  CHECK(with.stats.peak_kv_used_tokens == 48);
  const double last_ms[] = {39, 49, 84};
  for (size_t i = 0; i < 3; ++i) {
    const Request& r = with.requests[i];
    INFO("request " << i);
    CHECK(r.first_token == Time::from_ms(29));
    CHECK(r.last_token == Time::from_ms(last_ms[i]));
    CHECK(r.finish == Time::from_ms(last_ms[i]));
    CHECK(r.release == Time::from_ms(last_ms[i]));
    CHECK(r.generated_tokens == r.spec.output_tokens);
    CHECK(r.context_tokens == 8 + r.spec.output_tokens - 1);
  }
  same_results(with, run(yaml, false));
}

TEST_CASE("decode streak: a finish that lets a waiting request in, and two finishing at once",
          "[sim][streak]") {
  // KV of 3 blocks of 16: A, B, C (8-token prompts; 3, 5 and 6 output tokens) take one each at
  // 0 (prefill 29 ms); D (8 tokens, 2 output) waits. A's last token ends the streak's second
  // step (39 ms) and frees its block: the next step admits D, the scheduler planning only the
  // admission beside the streak's decodes, a step of 5 + 8 ms (52 ms; D's first token, B's 4th,
  // C's 4th). D joins the streak; the next step (57 ms) is B's and D's last, both leaving at
  // once; C's last comes at 62 ms. Every step but the first is a streak's.
  const std::string yaml = trace_scenario("0,8,3\n0,8,5\n0,8,6\n0,8,2\n",
                                          "{kind: linear, base_ms: 5, per_prefill_token_ms: 1}",
                                          "{kind: continuous, max_num_seqs: 4}",
                                          "{policy: paged, capacity_tokens: 48, block_size: 16}");
  const CheckedRun with = run(yaml, true);
  REQUIRE(with.requests.size() == 4);
  CHECK(with.stats.steps == 6);
  CHECK(with.stats.streak_steps == 5);
  const double first_ms[] = {29, 29, 29, 52}, last_ms[] = {39, 57, 62, 57};
  for (size_t i = 0; i < 4; ++i) {
    const Request& r = with.requests[i];
    INFO("request " << i);
    CHECK(r.first_token == Time::from_ms(first_ms[i]));
    CHECK(r.finish == Time::from_ms(last_ms[i]));
    CHECK(r.generated_tokens == r.spec.output_tokens);
  }
  same_results(with, run(yaml, false));
}

TEST_CASE("decode streak: a batch captured at once leaves in order, ties together",
          "[sim][streak]") {
  // Twelve 8-token prompts at 0 with 7, 3, 9, 3, 12, 5, 9, 2, 7, 12, 4 and 3 output tokens: one
  // prefill step of 5 + 96 ms gives each its first token at 101 ms; the next step captures all
  // twelve in one walk (the leave heap made once), and a request of k tokens leaves at the end
  // of the streak's step k - 1, 101 + 5 (k - 1) ms, those of equal k at the same step. Every
  // step but the first is a streak's; --check compares the streak's sums with the requests'.
  const int outputs[] = {7, 3, 9, 3, 12, 5, 9, 2, 7, 12, 4, 3};
  std::string rows;
  for (const int k : outputs) rows += "0,8," + std::to_string(k) + "\n";
  const std::string yaml =
      trace_scenario(rows, "{kind: linear, base_ms: 5, per_prefill_token_ms: 1}",
                     "{kind: continuous, max_num_seqs: 16}",
                     "{policy: paged, capacity_tokens: 4096, block_size: 16}");
  const CheckedRun with = run(yaml, true);
  REQUIRE(with.requests.size() == 12);
  CHECK(with.stats.steps == 12);
  CHECK(with.stats.streak_steps == 11);
  for (size_t i = 0; i < 12; ++i) {
    const Request& r = with.requests[i];
    INFO("request " << i);
    CHECK(r.first_token == Time::from_ms(101));
    CHECK(r.finish == Time::from_ms(101.0 + 5.0 * (outputs[i] - 1)));
    CHECK(r.generated_tokens == outputs[i]);
  }
  same_results(with, run(yaml, false));
}

TEST_CASE("decode streak: a member's departure makes a session's next turn ready at once",
          "[sim][streak]") {
  // a1 and b (8-token prompts) are prefilled together (5 + 16 ms); a1's third token, in the
  // streak's second step, ends at 31 ms, and it leaves then. a2, its next turn with no think
  // time (prompt: a1's 8 + 3 tokens and its own 5), arrives at that instant, made ready by the
  // departure: the next step, b's decode in the streak and a2's prefill, takes 5 + 16 ms (its
  // first token at 52 ms), and a2 joins the streak (leaving at 67 ms, b at 77 ms).
  const std::string yaml =
      csv_trace_run("sessions.csv",
                    "arrival_s,prompt_tokens,output_tokens,session_id,think_s\n"
                    "0,8,3,a,\n0,5,4,a,0\n0,8,9,b,\n");
  const CheckedRun with = run(yaml, true);
  REQUIRE(with.requests.size() == 3);
  const Request &a1 = with.requests[0], &a2 = with.requests[1], &b = with.requests[2];
  CHECK(a1.release == Time::from_ms(31));
  CHECK(a2.spec.arrival == Time::from_ms(31));
  CHECK(a2.spec.prompt_tokens == 16);
  CHECK(a2.first_token == Time::from_ms(52));
  CHECK(a2.release == Time::from_ms(67));
  CHECK(b.release == Time::from_ms(77));
  CHECK(with.stats.steps == 9);
  CHECK(with.stats.streak_steps == 8);
  same_results(with, run(yaml, false));
}

TEST_CASE("decode streak: a request admitted long after the capture joins it", "[sim][streak]") {
  // A (8-token prompt, 200 tokens) runs alone from 0: prefill 13 ms, then 5 ms decodes, its
  // 99th token at 13 + 98 x 5 = 503 ms. B (8 tokens, 30 output) arrives at 500 ms and is
  // admitted in the step from 503 ms beside A's decode (5 + 8 ms: B's first token at 516 ms),
  // then joins the streak, 99 steps after its capture: its counts are kept less the steps run
  // (below zero), and its second block falls due at its 9th decode. B's last token comes at
  // 516 + 29 x 5 = 661 ms, A's at 516 + 100 x 5 = 1016 ms; every step but the first is a
  // streak's.
  const std::string yaml =
      trace_scenario("0,8,200\n0.5,8,30\n", "{kind: linear, base_ms: 5, per_prefill_token_ms: 1}",
                     "{kind: continuous, max_num_seqs: 4}",
                     "{policy: paged, capacity_tokens: 4096, block_size: 16}");
  const CheckedRun with = run(yaml, true);
  REQUIRE(with.requests.size() == 2);
  const Request &a = with.requests[0], &b = with.requests[1];
  CHECK(a.first_token == Time::from_ms(13));
  CHECK(a.finish == Time::from_ms(1016));
  CHECK(b.first_token == Time::from_ms(516));
  CHECK(b.finish == Time::from_ms(661));
  CHECK(b.generated_tokens == 30);
  CHECK(b.context_tokens == 8 + 29);
  CHECK(a.context_tokens == 8 + 199);
  CHECK(with.stats.steps == 200);
  CHECK(with.stats.streak_steps == 199);
  // At most A 144 + B 48 while both run (B leaves at A's 129th token); A alone ends at 208.
  CHECK(with.stats.peak_kv_used_tokens == 208);
  same_results(with, run(yaml, false));
}

TEST_CASE("decode streak: admissions that finish or are cancelled at their first token",
          "[sim][streak]") {
  // A runs a streak; B (one output token) finishes at its prefill, C is cancelled by its client
  // after its first token, both in the streak step that admits them (from 503 ms, 5 + 16 ms);
  // D is admitted with them and joins.
  const std::string yaml =
      csv_trace_run("cancel.csv",
                    "arrival_s,prompt_tokens,output_tokens,cancel_after_tokens\n"
                    "0,8,200,\n0.5,8,1,\n0.5,4,50,1\n0.5,4,20,\n");
  const CheckedRun with = run(yaml, true);
  REQUIRE(with.requests.size() == 4);
  const Request &b = with.requests[1], &c = with.requests[2], &d = with.requests[3];
  CHECK(b.finish == Time::from_ms(524));
  CHECK(b.state == RequestState::Released);
  CHECK(c.state == RequestState::Abandoned);
  CHECK(c.end_cause == EndCause::Cancelled);
  CHECK(c.generated_tokens == 1);
  CHECK(d.first_token == Time::from_ms(524));
  CHECK(d.finish == Time::from_ms(524 + 19 * 5));
  CHECK(with.stats.streak_steps == with.stats.steps - 1);
  same_results(with, run(yaml, false));
}

TEST_CASE("decode streak: KV running short ends a streak and preempts as before", "[sim][streak]") {
  // Little KV: streaks run into a full cache and preemptions, with requests waiting whose
  // prefill does not fit (--check verifies the streak's KV against its requests at every step).
  for (const bool chunked : {true, false}) {
    INFO("chunked_prefill " << chunked);
    const std::string yaml =
        scenario("{policy: paged, capacity_tokens: 320, block_size: 16}", chunked);
    const CheckedRun with = run(yaml, true);
    const CheckedRun without = run(yaml, false);
    int64_t preemptions = 0;
    for (const Request& r : with.requests) preemptions += r.preemptions;
    CHECK(preemptions > 0);
    CHECK(with.stats.streak_steps > with.stats.steps / 10);
    same_results(with, without);
  }
}

TEST_CASE("decode streak: taken up again after the step where its KV ran short", "[sim][streak]") {
  // Batches of up to 16 near a full cache: a streak step whose blocks are not free is planned
  // the ordinary way (the scheduler preempts), and the streak then takes up again the members
  // that step decoded, the preempted and the finished dropped from its sums, block boundaries
  // and leave heap, and its counts moved to start at that step (boundaries rotated by blocks
  // of 16 and 7 tokens, so steps % block is rarely 0). --check compares the streak's shape and
  // KV with its requests' at every step; the results are those of planning every step.
  for (const bool chunked : {false, true}) {
    for (const std::string& kv :
         {std::string("{policy: paged, capacity_tokens: 320, block_size: 16}"),
          std::string("{policy: paged, capacity_tokens: 266, block_size: 7}")}) {
      INFO("chunked_prefill " << chunked << ", kv " << kv);
      const std::string yaml = scenario(kv, chunked);
      const CheckedRun with = run_suspending(yaml);
      const CheckedRun without = run(yaml, false);
      int64_t preemptions = 0;
      for (const Request& r : with.requests) preemptions += r.preemptions;
      CHECK(preemptions > 0);
      CHECK(with.stats.streak_resumes > 0);
      CHECK(without.stats.streak_resumes == 0);
      same_results(with, without);
    }
  }
}

TEST_CASE("decode streak: a step short of KV preempts the newest members and stays a streak's",
          "[sim][streak]") {
  // The same runs near a full cache, with the scheduler's promise (Scheduler::preempts_newest):
  // the engine works out the step's victims as the scheduler's pass would (the members taking
  // the free blocks in order, the newest preempted whenever one finds none), preempts them and
  // runs the step as the streak's, with --check comparing the streak's shape and KV with its
  // requests' at every step. The results, preemptions included, are those of planning every
  // step; the steps short of KV that went the ordinary way (and the streaks taken up again
  // after them) are now streak steps.
  for (const bool chunked : {false, true}) {
    for (const std::string& kv :
         {std::string("{policy: paged, capacity_tokens: 320, block_size: 16}"),
          std::string("{policy: paged, capacity_tokens: 266, block_size: 7}"),
          std::string("{policy: paged, capacity_tokens: 160, block_size: 1}")}) {
      INFO("chunked_prefill " << chunked << ", kv " << kv);
      const std::string yaml = scenario(kv, chunked);
      const CheckedRun with = run(yaml, true);
      const CheckedRun suspending = run_suspending(yaml);
      const CheckedRun without = run(yaml, false);
      int64_t preemptions = 0;
      for (const Request& r : with.requests) preemptions += r.preemptions;
      CHECK(preemptions > 0);
      CHECK(suspending.stats.streak_resumes > 0);
      CHECK(with.stats.streak_resumes < suspending.stats.streak_resumes);
      CHECK(with.stats.streak_steps > suspending.stats.streak_steps);
      same_results(with, without);
      same_results(suspending, without);
    }
  }
}

TEST_CASE("decode streak: steps ended without an event stop where the event loop would",
          "[sim][streak]") {
  // A streak's steps that end before any other event end at once (no event queued); a
  // simulated time limit anywhere in a streak stops the run at the same step, with the same
  // requests unfinished, as planning every step does; and two replicas' streaks interleave with
  // each other's events as before.
  const std::string yaml = scenario("{policy: paged, capacity_tokens: 100000, block_size: 16}");
  const CheckedRun whole = run(yaml, true);
  REQUIRE(whole.stats.streak_steps > 100);
  for (const double at_s : {0.05, 0.3, 0.7131, 1.0, 1.4}) {
    INFO("max_sim_time " << at_s << " s");
    RunLimits limits;
    limits.max_sim_time = Time::from_seconds(at_s);
    const CheckedRun with = run(yaml, true, limits);
    const CheckedRun without = run(yaml, false, limits);
    REQUIRE(with.stats.stopped_by == "simulated time limit");
    int64_t unfinished = 0;
    for (const Request& r : with.requests) unfinished += r.state != RequestState::Released;
    CHECK(unfinished > 0);
    same_results(with, without);
  }
  const std::string two = yaml + "cluster: {replicas: 2, router: {kind: round_robin}}\n";
  const CheckedRun with = run(two, true);
  CHECK(with.stats.streak_steps > 100);
  same_results(with, run(two, false));
}

TEST_CASE("decode streak: a step ending at the time limit, at an arrival or at an interrupt",
          "[sim][streak]") {
  // The edges of ending a streak's steps without an event: a time limit equal to a step's end
  // (that step still ends; the run stops after it) or one nanosecond before it; arrivals at
  // exactly a streak step's end (10 ms steps, arrivals on the 10 ms grid: the arrival, queued
  // first, comes first); an interrupt raised at a step's end (the run stops at the next event,
  // as the event loop checks before each one).
  const std::string yaml = scenario("{policy: paged, capacity_tokens: 100000, block_size: 16}");
  StepEndsSeen seen;
  const CheckedRun whole = run(yaml, true, {}, &seen);
  REQUIRE(seen.ends.size() > 200);
  for (const size_t k : {size_t{37}, size_t{150}, seen.ends.size() - 3}) {
    for (const int64_t less : {int64_t{0}, int64_t{1}}) {
      INFO("limit at step end " << k << " less " << less << " ns");
      RunLimits limits;
      limits.max_sim_time = seen.ends[k] - Time::ns(less);
      same_results(run(yaml, true, limits), run(yaml, false, limits));
    }
  }
  for (const size_t k : {size_t{20}, size_t{120}}) {
    INFO("interrupt at step end " << k);
    volatile std::sig_atomic_t flag_with = 0, flag_without = 0;
    RunLimits with_limits, without_limits;
    with_limits.interrupt = &flag_with;
    without_limits.interrupt = &flag_without;
    StepEndsSeen a, b;
    a.flag = &flag_with;
    b.flag = &flag_without;
    a.at = b.at = seen.ends[k];
    const CheckedRun with = run(yaml, true, with_limits, &a);
    const CheckedRun without = run(yaml, false, without_limits, &b);
    CHECK(with.stats.stopped_by == "interrupted");
    CHECK(a.ends == b.ends);
    same_results(with, without);
  }
  // Every step 10 ms (linear, no per-token cost), arrivals every 30 ms: ties with step ends.
  const std::string grid =
      "workload: {synthetic: {requests: 40, arrival: {kind: fixed, interval_s: 0.03},\n"
      "  prompt_tokens: {kind: uniform, min: 1, max: 20},\n"
      "  output_tokens: {kind: uniform, min: 5, max: 80}}}\n"
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 16, max_num_batched_tokens: 96}\n"
      "kv: {policy: paged, capacity_tokens: 100000, block_size: 16}\nseed: 3\n";
  StepEndsSeen g;
  const CheckedRun with = run(grid, true, {}, &g);
  int64_t ties = 0;
  for (const Request& r : with.requests)
    ties += std::count(g.ends.begin(), g.ends.end(), r.spec.arrival);
  CHECK(ties > 10);
  CHECK(with.stats.streak_steps > 50);
  same_results(with, run(grid, false));
}

TEST_CASE("decode streak: step ends straight into the recorder's array, past its bound too",
          "[sim][streak]") {
  // The streak appends its steps' ends to the summary recorder's array itself
  // (StepObserver::end_sink) until the array reaches its bound (2 x (KV capacity + 4,096)
  // ends), where the recorder drops the oldest as on_step_end does. 240 requests of up to 400
  // output tokens, few at once, on 512 tokens of KV: more than 2 x 9,216 steps, most in
  // streaks. The ITL, which the kept ends give, must be that of planning every step; and with
  // a second observer of step ends (no array then) too.
  const std::string yaml =
      "workload: {synthetic: {requests: 240, arrival: {kind: poisson, rate_per_s: 2},\n"
      "  prompt_tokens: {kind: uniform, min: 1, max: 90},\n"
      "  output_tokens: {kind: uniform, min: 100, max: 400}}}\n"
      "step_time: {kind: roofline, model: llama-2-7b, hardware: a100-80gb, weight_dtype: fp16}\n"
      "scheduler: {kind: continuous, max_num_seqs: 4}\n"
      "kv: {policy: paged, capacity_tokens: 512, block_size: 16}\nseed: 5\n";
  const auto itl = [&](bool streaks, bool second_observer) {
    Simulation sim(components_of(yaml, streaks));
    MetricsRecorder metrics;
    sim.add_step_observer(metrics);
    sim.add_recorder(metrics);
    StepEndsSeen seen;
    if (second_observer) sim.add_step_observer(seen);
    sim.run();
    const RunStats& stats = sim.stats();
    CHECK(stats.steps > 2 * 2 * (512 + 4096));
    CHECK((stats.streak_steps > stats.steps / 2) == streaks);
    return metrics.summary(stats).itl_s;
  };
  const GapDistribution want = itl(false, false);
  for (const bool second : {false, true}) {
    INFO("second observer " << second);
    same_itl(itl(true, second), want);
  }
}

TEST_CASE("decode streak: the step-end array is asked for as each run of streak steps starts",
          "[sim][streak]") {
  // The engine asks the observer for a replica's array once a run of streak steps (the loop's
  // batch changes do not ask again) and appends the run's ends to it. The array may move at
  // the observer's next on_step_end for another replica (StepObserver::end_sink): this one
  // then takes what each other replica's array holds and hands that replica the other of two
  // at its next asking. An end put where it was not asked for is lost (never taken), so each
  // replica's ends seen must be those of planning every step, in order.
  class MovingArrays final : public StepObserver {
   public:
    void on_step(const StepRecord& s) override { on_step_end(s.replica, s.start + s.duration, 0); }
    void on_step_end(uint32_t replica, Time end, int64_t) override {
      for (uint32_t r = 0; r < 2; ++r) {
        take(r);
        if (r != replica) current[r] = 1 - current[r];  // moved: ends put there are lost
      }
      seen[replica].push_back(end.count_ns());
    }
    [[nodiscard]] bool ends_only() const override { return true; }
    StepEndSink end_sink(uint32_t replica, int64_t) override {
      take(replica);
      ++asked;
      return {&arrays[replica][current[replica]], SIZE_MAX};
    }
    /// The ends replica `r`'s current array holds, moved to `seen`.
    void take(uint32_t r) {
      GrowArray<int64_t>& a = arrays[r][current[r]];
      seen[r].insert(seen[r].end(), a.begin(), a.end());
      a.resize(0);
    }
    GrowArray<int64_t> arrays[2][2];
    int current[2] = {0, 0};
    int64_t asked = 0;
    std::vector<int64_t> seen[2];
  };
  const std::string yaml = scenario("{policy: paged, capacity_tokens: 100000, block_size: 16}") +
                           "cluster: {replicas: 2, router: {kind: round_robin}}\n";
  const auto go = [&](bool streaks, MovingArrays& ends) {
    Simulation sim(components_of(yaml, streaks));
    sim.add_step_observer(ends);
    sim.run();
    for (uint32_t r = 0; r < 2; ++r) ends.take(r);
    return sim.stats();
  };
  MovingArrays want, got;
  const RunStats plain = go(false, want);
  const RunStats streaks = go(true, got);
  CHECK(plain.streak_steps == 0);
  CHECK(streaks.streak_steps > streaks.steps / 4);
  CHECK(got.asked > 0);
  CHECK(want.seen[0].size() + want.seen[1].size() == static_cast<size_t>(plain.steps));
  CHECK(!want.seen[1].empty());
  CHECK(got.seen[0] == want.seen[0]);
  CHECK(got.seen[1] == want.seen[1]);
}

TEST_CASE("decode streak: the loop without checks or step records gives the same results",
          "[sim][streak]") {
  // Without --check, pipeline stages or an observer of step records, and with an observer of
  // step ends, the streak's loop leaves those branches out of each step (streak_loop<true>).
  // Its results must be those of planning every step, and of the loop that keeps them (a
  // second observer, of step records, switches to it): the requests, the run's books (the
  // costed steps and their sums too) and the ITL from the kept step ends.
  class Records final : public StepObserver {
   public:
    void on_step(const StepRecord&) override { ++steps; }
    int64_t steps = 0;
  };
  const std::string yaml = scenario("{policy: paged, capacity_tokens: 100000, block_size: 16}");
  const auto go = [&](bool streaks, bool records, GapDistribution& itl) {
    Simulation sim(components_of(yaml, streaks));
    MetricsRecorder metrics;
    sim.add_step_observer(metrics);
    sim.add_recorder(metrics);
    Records seen;
    if (records) sim.add_step_observer(seen);
    CollectingRecorder rec;
    sim.add_recorder(rec);
    sim.run();
    itl = metrics.summary(sim.stats()).itl_s;
    CHECK(seen.steps == (records ? sim.stats().steps : 0));
    return CheckedRun{rec.by_id(), sim.stats()};
  };
  GapDistribution want_itl, plain_itl, kept_itl;
  const CheckedRun want = go(false, false, want_itl);
  const CheckedRun plain = go(true, false, plain_itl);
  const CheckedRun kept = go(true, true, kept_itl);
  CHECK(plain.stats.streak_steps > plain.stats.steps / 4);
  CHECK(kept.stats.streak_steps == plain.stats.streak_steps);
  for (const CheckedRun* got : {&plain, &kept}) {
    same_results(*got, want);
    REQUIRE(got->stats.replicas.size() == want.stats.replicas.size());
    for (size_t i = 0; i < want.stats.replicas.size(); ++i) {
      const ReplicaStats& a = got->stats.replicas[i];
      const ReplicaStats& b = want.stats.replicas[i];
      CHECK(a.steps == b.steps);
      CHECK(a.seat_steps == b.seat_steps);
      CHECK(a.costed_steps == b.costed_steps);
      CHECK(a.costed_steps == a.steps);  // the roofline costs every step
      CHECK(a.active_s == b.active_s);
      CHECK(a.bytes_moved == b.bytes_moved);
      CHECK(a.flops == b.flops);
      CHECK(a.peak_kv_used_tokens == b.peak_kv_used_tokens);
    }
  }
  CHECK(want_itl.count > 0);
  for (const GapDistribution* got : {&plain_itl, &kept_itl}) same_itl(*got, want_itl);
}

TEST_CASE("decode streak: quiet steps, costed by the operator model's stretch, change nothing",
          "[sim][streak]") {
  // Without --check, with one observer of step ends and a step-time model that has a decode
  // stretch (the operator model, on the tiny tables), the streak's loop runs the steps in which
  // nothing but the clock moves (no member's last token, no admission, no block boundary) with
  // its books in locals (quiet_streak_steps). The requests, the run's and each replica's books
  // (the floating-point sums to the bit) and the ITL must be those of planning every step; so
  // with a simulated time limit inside a run of quiet steps and an interrupt raised at a
  // departure, and on two replicas.
  const std::string dir = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";
  std::string csv = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 48; ++i)
    csv += std::to_string(0.05 * i) + "," + std::to_string(1 + (i * 37) % 300) + "," +
           std::to_string(1 + (i * 53) % 240) + "\n";
  const std::string base =
      "workload: {trace: {path: " + write_temp("quiet.csv", csv) +
      "}}\n"
      "step_time: {kind: operator, model: " +
      dir + "/tiny-dense.yaml, hardware: h100-sxm,\n  operators: {source: tables, path: " + dir +
      ", gpu: tiny_gpu, engine: vllm}}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 512}\n"
      "kv: {policy: paged, capacity_tokens: 100000, block_size: 16}\nseed: 3\n";
  // Sets the flag when the `at`-th request departs.
  class FlagAtDeparture final : public RequestRecorder {
   public:
    void record(const Request&) override {
      if (++seen == at && flag) *flag = 1;
    }
    volatile std::sig_atomic_t* flag = nullptr;
    int64_t at = -1, seen = 0;
  };
  struct Books {
    CheckedRun run;
    GapDistribution itl;
  };
  const auto go = [](const std::string& yaml, bool streaks, RunLimits limits, int64_t flag_at) {
    volatile std::sig_atomic_t flag = 0;
    if (flag_at >= 0) limits.interrupt = &flag;
    Simulation sim(components_of(yaml, streaks), /*check=*/false, limits);
    MetricsRecorder metrics;
    sim.add_step_observer(metrics);
    sim.add_recorder(metrics);
    FlagAtDeparture departures;
    departures.flag = &flag;
    departures.at = flag_at;
    sim.add_recorder(departures);
    CollectingRecorder rec;
    sim.add_recorder(rec);
    sim.run();
    return Books{{rec.by_id(), sim.stats()}, metrics.summary(sim.stats()).itl_s};
  };
  const auto same_books = [](const Books& got, const Books& want) {
    same_results(got.run, want.run);
    same_itl(got.itl, want.itl);
    const RunStats &a = got.run.stats, &b = want.run.stats;
    CHECK(a.peak_bytes_per_s == b.peak_bytes_per_s);
    CHECK(a.peak_flops_per_s == b.peak_flops_per_s);
    REQUIRE(a.replicas.size() == b.replicas.size());
    for (size_t i = 0; i < a.replicas.size(); ++i) same_replica_books(a.replicas[i], b.replicas[i]);
  };
  const std::string two = base + "cluster: {replicas: 2, router: {kind: round_robin}}\n";
  for (const std::string* yaml : {&base, &two}) {
    const Books want = go(*yaml, false, {}, -1);
    const Books got = go(*yaml, true, {}, -1);
    CHECK(want.run.stats.streak_quiet_steps == 0);
    CHECK(got.run.stats.streak_quiet_steps > got.run.stats.steps / 2);
    CHECK(got.run.stats.streak_quiet_steps < got.run.stats.streak_steps);
    CHECK(want.itl.count > 1000);
    same_books(got, want);
  }
  const Books whole = go(base, true, {}, -1);
  for (const double part : {0.1, 0.37, 0.8}) {
    INFO("max_sim_time at " << part << " of the run");
    RunLimits limits;
    limits.max_sim_time =
        Time::ns(static_cast<int64_t>(static_cast<double>(whole.run.stats.end.count_ns()) * part));
    const Books got = go(base, true, limits, -1);
    CHECK(got.run.stats.stopped_by == "simulated time limit");
    same_books(got, go(base, false, limits, -1));
  }
  for (const int64_t at : {int64_t{5}, int64_t{30}}) {
    INFO("interrupt at departure " << at);
    const Books got = go(base, true, {}, at);
    CHECK(got.run.stats.stopped_by == "interrupted");
    same_books(got, go(base, false, {}, at));
  }
}

TEST_CASE("decode streak: the roofline's stretch and a queue kept waiting take the quiet path",
          "[sim][streak]") {
  // The Vidur comparison's shape (bench/configs/vidur-azure-conv-llama2-7b-a100.yaml): the
  // roofline model, the continuous policy without chunked prefill, and a queue that waits for
  // most of the run. Its quiet steps take blocks (blocks of 16 tokens and of 1, where every step
  // takes one per member): admits_nothing is asked once for the run (admits_nothing_as_kv_fills)
  // and the roofline's DecodeStretch costs them. Without either, the quiet path runs none of
  // them (a model without a stretch) or, while the queue waits, only those that take no block
  // (none with blocks of 1: 1,882 quiet steps of 2,067 against 315 when written). The requests
  // and every book as planning every step.
  std::string csv = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 96; ++i)
    csv += std::to_string(0.002 * i) + "," + std::to_string(20 + (i * 37) % 300) + "," +
           std::to_string(40 + (i * 53) % 400) + "\n";
  const std::string trace = write_temp("quiet-roofline.csv", csv);
  const auto yaml_of = [&](int block) {
    return "workload: {trace: {path: " + trace +
           "}}\n"
           "step_time: {kind: roofline, model: llama-2-7b, hardware: a100-80gb, weight_dtype: "
           "fp16,\n  bandwidth_efficiency: 0.8, compute_efficiency: 0.6, overhead_ms: 0}\n"
           "scheduler: {kind: continuous, max_num_seqs: 12, max_num_batched_tokens: 4096,\n"
           "  chunked_prefill: false}\n"
           "kv: {policy: paged, capacity_tokens: 200000, block_size: " +
           std::to_string(block) + "}\nseed: 1\n";
  };
  enum class Way { planned, streaks, no_kept_answer };
  const auto go = [](const std::string& yaml, Way way) {
    Scenario sc = build_scenario(doc_of(yaml));
    for (ReplicaParts& p : sc.components.replicas) {
      if (way == Way::planned) p.scheduler = std::make_unique<NoStreaks>(std::move(p.scheduler));
      if (way == Way::no_kept_answer)
        p.scheduler = std::make_unique<NoStreakPreemption>(std::move(p.scheduler));
    }
    Simulation sim(std::move(sc.components), /*check=*/false, RunLimits{});
    MetricsRecorder metrics;
    sim.add_step_observer(metrics);
    sim.add_recorder(metrics);
    CollectingRecorder rec;
    sim.add_recorder(rec);
    sim.run();
    return std::make_pair(CheckedRun{rec.by_id(), sim.stats()}, metrics.summary(sim.stats()).itl_s);
  };
  for (const int block : {16, 1}) {
    INFO("block_size " << block);
    const auto [want, want_itl] = go(yaml_of(block), Way::planned);
    const auto [got, got_itl] = go(yaml_of(block), Way::streaks);
    const auto [asked, asked_itl] = go(yaml_of(block), Way::no_kept_answer);
    const RunStats &a = got.stats, &b = want.stats;
    CHECK(b.streak_quiet_steps == 0);
    CHECK(a.streak_quiet_steps > a.steps * 3 / 4);
    CHECK(a.streak_quiet_steps > asked.stats.streak_quiet_steps + a.steps / 4);
    if (block == 1) CHECK(asked.stats.streak_quiet_steps < a.steps / 4);  // once none waits
    CHECK(want_itl.count > 1000);
    for (const auto& [run, itl] : {std::tie(got, got_itl), std::tie(asked, asked_itl)}) {
      same_results(run, want);
      same_itl(itl, want_itl);
      CHECK(run.stats.peak_bytes_per_s == b.peak_bytes_per_s);
      CHECK(run.stats.peak_flops_per_s == b.peak_flops_per_s);
      REQUIRE(run.stats.replicas.size() == b.replicas.size());
      same_replica_books(run.stats.replicas[0], b.replicas[0]);
    }
  }
}

}  // namespace t_sim_decode_streak_test
