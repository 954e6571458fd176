// The parallel engine (sim/parallel_engine.h): on 1 to 5 threads (1 to 4 shards) it writes exactly
// what the sequential engine writes (requests.csv, steps.csv and summary.json, byte for byte), and
// a run it cannot split goes to the sequential engine with a one-line notice.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "metrics/run_scenario.h"
#include "tests/support.h"

namespace t_sim_parallel_engine_test {

using namespace servesim;
using namespace servesim::test;

namespace {

struct Outputs {
  RunOutput run;
  std::string steps_csv;
};

Outputs run_with_threads(const std::string& yaml, int threads) {
  RunOptions o;
  o.threads = threads;
  std::ostringstream steps;
  o.steps_csv = &steps;
  Outputs out{run_scenario(doc_of(yaml), o), {}};
  out.steps_csv = steps.str();
  return out;
}

/// summary.json alone: no requests.csv, no steps.csv (the summary recorded shard by shard with
/// nothing else merged: the benchmarks' and sweeps' way).
std::string summary_only(const std::string& yaml, int threads) {
  RunOptions o;
  o.threads = threads;
  o.no_requests_csv = true;
  return run_scenario(doc_of(yaml), o).summary_json;
}

/// Runs `yaml` sequentially, then on 1 to 4 threads, and compares the outputs.
void check_same_as_sequential(const std::string& yaml) {
  const Outputs seq = run_with_threads(yaml, 0);
  REQUIRE(seq.run.engine_notice.empty());
  REQUIRE(seq.run.summary.finished > 0);
  for (int threads = 1; threads <= 5; ++threads) {
    INFO("threads: " << threads);
    const Outputs par = run_with_threads(yaml, threads);
    CHECK(par.run.engine_notice.empty());
    CHECK(par.run.requests_csv == seq.run.requests_csv);
    CHECK(par.run.summary_json == seq.run.summary_json);
    CHECK(par.steps_csv == seq.steps_csv);
    if (threads <= 4) CHECK(summary_only(yaml, threads) == seq.run.summary_json);
  }
}

std::string workload(int64_t requests, const std::string& arrival, const std::string& prompt,
                     const std::string& output) {
  return fmt::format(
      "workload: {{synthetic: {{requests: {}, arrival: {}, prompt_tokens: {}, output_tokens: "
      "{}}}}}\n",
      requests, arrival, prompt, output);
}

const std::string k_linear =
    "step_time: {kind: linear, base_ms: 8, per_seq_ms: 0.5, per_prefill_token_ms: 0.01}\n";
const std::string k_paged = "kv: {policy: paged, block_size: 16, capacity_tokens: 8192}\n";

}  // namespace

TEST_CASE("parallel engine: round robin over 4 replicas matches the sequential engine",
          "[sim][cluster][parallel]") {
  check_same_as_sequential(
      workload(300, "{kind: poisson, rate_per_s: 60}", "{kind: uniform, min: 16, max: 600}",
               "{kind: uniform, min: 1, max: 60}") +
      k_linear + "scheduler: {kind: continuous, max_num_seqs: 8}\n" + k_paged +
      "cluster: {replicas: 4, router: {kind: round_robin, load_refresh_ms: 50}}\n");
}

TEST_CASE("parallel engine: exact ties between replicas come out in the sequential order",
          "[sim][cluster][parallel]") {
  // Fixed arrivals and lengths and a linear step model: replicas end steps at the same
  // nanosecond, so requests leave several at one instant, from several replicas.
  check_same_as_sequential(
      workload(400, "{kind: fixed, rate_per_s: 400}", "{kind: fixed, value: 64}",
               "{kind: fixed, value: 12}") +
      "step_time: {kind: linear, base_ms: 10}\n" +
      "scheduler: {kind: continuous, max_num_seqs: 4}\n" + k_paged +
      "cluster: {replicas: 8, router: {kind: least_outstanding, load_refresh_ms: 25, "
      "delay_ms: 2}}\n");
}

TEST_CASE("parallel engine: least_kv over 16 replicas with preemption matches",
          "[sim][cluster][parallel]") {
  // Small KV memories: requests are preempted and recomputed; the router reads KV use.
  check_same_as_sequential(
      workload(500, "{kind: gamma, rate_per_s: 150, cv: 3}", "{kind: uniform, min: 100, max: 900}",
               "{kind: uniform, min: 20, max: 200}") +
      k_linear + "scheduler: {kind: continuous, max_num_seqs: 16}\n" +
      "kv: {policy: paged, block_size: 16, capacity_tokens: 2048}\n" +
      "cluster: {replicas: 16, router: {kind: least_kv, load_refresh_ms: 40}}\n");
}

TEST_CASE("parallel engine: dynamic batching (timers, the end of arrivals) matches",
          "[sim][cluster][parallel]") {
  // A dynamic batcher's timers, and its partial batch dispatched at once when no arrival is to
  // come.
  check_same_as_sequential(
      workload(150, "{kind: poisson, rate_per_s: 40}", "{kind: fixed, value: 32}",
               "{kind: uniform, min: 1, max: 20}") +
      k_linear + "scheduler: {kind: dynamic, max_batch_size: 4, max_queue_delay_ms: 30}\n" +
      k_paged +
      "cluster: {replicas: 5, router: {kind: least_outstanding, load_refresh_ms: 100}}\n");
}

TEST_CASE("parallel engine: static batching ends every replica's partial batch, as sequential",
          "[sim][cluster][parallel]") {
  // 203 requests round robin over 5 replicas of batch 16: every replica is left with a partial
  // batch, which it dispatches only once it hears that no request is to come. Before the fix
  // only the replica of the last arrival heard it and the others' requests stayed unserved.
  const std::string yaml =
      workload(203, "{kind: fixed, rate_per_s: 100}", "{kind: fixed, value: 32}",
               "{kind: fixed, value: 8}") +
      k_linear + "scheduler: {kind: static, max_batch_size: 16}\n" + k_paged +
      "cluster: {replicas: 5, router: {kind: round_robin, load_refresh_ms: 50}}\n";
  const Outputs seq = run_with_threads(yaml, 0);
  CHECK(seq.run.summary.finished == 203);
  check_same_as_sequential(yaml);
}

TEST_CASE("parallel engine: heterogeneous pools match", "[sim][cluster][parallel]") {
  check_same_as_sequential(
      workload(300, "{kind: poisson, rate_per_s: 80}", "{kind: uniform, min: 16, max: 400}",
               "{kind: uniform, min: 1, max: 50}") +
      "scheduler: {kind: continuous, max_num_seqs: 8}\n" + k_paged +
      "cluster:\n  router: {kind: least_outstanding, load_refresh_ms: 30}\n  pools:\n"
      "    - {name: fast, replicas: 3, step_time: {kind: linear, base_ms: 5}}\n"
      "    - {name: slow, replicas: 3, step_time: {kind: linear, base_ms: 12}}\n");
}

TEST_CASE("parallel engine: the summary recorded shard by shard (SLOs, ITL) matches",
          "[sim][cluster][parallel]") {
  // SLO counts, every latency's mean (summed replica by replica), the ITL's std (shifted sums
  // folded across replicas) and the first rejection, with requests too long to fit.
  const std::string yaml =
      workload(400, "{kind: gamma, rate_per_s: 200, cv: 2}", "{kind: uniform, min: 16, max: 9000}",
               "{kind: uniform, min: 1, max: 90}") +
      k_linear + "scheduler: {kind: continuous, max_num_seqs: 8}\n" + k_paged +
      "slo: {ttft_ms: 60, tpot_ms: 12, e2e_ms: 900, itl_ms: 14, percentile: 90}\n" +
      "cluster: {replicas: 6, router: {kind: least_outstanding, load_refresh_ms: 20}}\n";
  const Outputs seq = run_with_threads(yaml, 0);
  REQUIRE(seq.run.summary.rejected > 0);
  REQUIRE(seq.run.summary.slo);
  for (int threads = 1; threads <= 4; ++threads) {
    INFO("threads: " << threads);
    CHECK(summary_only(yaml, threads) == seq.run.summary_json);
  }
}

TEST_CASE("parallel engine: live loads fall back to the sequential engine and say so",
          "[sim][cluster][parallel]") {
  const std::string yaml =
      workload(50, "{kind: poisson, rate_per_s: 50}", "{kind: fixed, value: 32}",
               "{kind: fixed, value: 4}") +
      k_linear + "scheduler: {kind: continuous, max_num_seqs: 8}\n" + k_paged +
      "cluster: {replicas: 4, router: {kind: least_outstanding, load_refresh_ms: 0}}\n";
  const RunOutput par = run_with_threads(yaml, 2).run;
  CHECK_THAT(par.engine_notice,
             Catch::Contains("sequential engine") && Catch::Contains("load_refresh_ms: 0"));
  CHECK(par.requests_csv == run_with_threads(yaml, 0).run.requests_csv);
}

// A router delay near the load refresh: a routing window spans load_refresh_ms of routing
// times (arrival + delay), so every request is routed on the same snapshot of the replicas'
// loads as in the sequential engine, and the run's files are the sequential engine's byte for
// byte.
TEST_CASE("parallel engine: a router delay near the load refresh keeps each window's snapshot",
          "[sim][cluster][parallel]") {
  // Delay 10 ms, refresh 25 ms: a window measured from arrival - delay instead of arrival +
  // delay would close 20 ms early, and later requests would see fresher loads than the
  // sequential engine gives them.
  const std::string yaml =
      "workload: {synthetic: {requests: 200, arrival: {kind: poisson, rate_per_s: 200}, "
      "prompt_tokens: {kind: uniform, min: 16, max: 400}, output_tokens: {kind: uniform, min: 1, "
      "max: 40}}}\n"
      "step_time: {kind: linear, base_ms: 8, per_seq_ms: 0.5, per_prefill_token_ms: 0.01}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 8192}\n"
      "cluster: {replicas: 4, router: {kind: least_outstanding, load_refresh_ms: 25, "
      "delay_ms: 10}}\n";
  const Outputs seq = run_with_threads(yaml, 0);
  REQUIRE(seq.run.engine_notice.empty());
  REQUIRE(seq.run.summary.finished == 200);
  for (int threads : {1, 2}) {
    INFO("threads: " << threads);
    const Outputs par = run_with_threads(yaml, threads);
    CHECK(par.run.engine_notice.empty());
    CHECK(par.run.requests_csv == seq.run.requests_csv);
    CHECK(par.run.summary_json == seq.run.summary_json);
    CHECK(par.steps_csv == seq.steps_csv);
  }
}

}  // namespace t_sim_parallel_engine_test
