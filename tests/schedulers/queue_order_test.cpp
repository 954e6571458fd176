// The waiting-queue orders of the continuous scheduler (schedulers/queue_order.h): hand-worked
// timelines for sjf, edf and fair, the predictor's determinism, and bad keys refused.
#include "schedulers/queue_order.h"

#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_schedulers_queue_order_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// step = 2 ms + 1 ms per sequence + 0.5 ms per prefill token: a 2-token prompt alone takes
// 2 + 1 + 1 = 4 ms, a decode alone 2 + 1 = 3 ms.
const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";

std::string one_seat(const std::string& policy) {
  return "{kind: continuous, max_num_seqs: 1, policy: " + policy + "}";
}

// A mix component replaying `rows` ("arrival_s,prompt_tokens,output_tokens" lines).
std::string component(const std::string& name, const std::string& rows, const std::string& extra) {
  const std::string path =
      write_temp(name + ".csv", "arrival_s,prompt_tokens,output_tokens\n" + rows);
  return "    - {name: " + name + ", trace: {path: " + path + "}" + extra + "}\n";
}

std::string mix_scenario(const std::string& components, const std::string& policy) {
  return "workload:\n  mix:\n    components:\n" + components + "step_time: " + k_linear +
         "\nscheduler: " + one_seat(policy) + "\nkv: " + k_kv + "\n";
}

int64_t ttft_ns(const Request& r) { return (r.first_token - r.spec.arrival).count_ns(); }

}  // namespace

TEST_CASE("queue order: sjf serves three simultaneous requests shortest output first",
          "[schedulers]") {
  // r0 (3 tokens), r1 (1 token), r2 (2 tokens), 2-token prompts, all at t=0, one seat.
  // sjf:  t=0  r1 prefill 4 ms -> t=4 r1 done (TTFT 4)
  //       t=4  r2 prefill      -> t=8 first token (TTFT 8); decode 3 ms -> t=11 done
  //       t=11 r0 prefill      -> t=15 (TTFT 15); two decodes -> t=21 done
  // fcfs: r0 TTFT 4 (done at 10), r1 TTFT 14, r2 TTFT 18.
  const std::string rows = "0,2,3\n0,2,1\n0,2,2\n";
  const auto sjf = run_requests(trace_scenario(rows, k_linear, one_seat("sjf"), k_kv));
  REQUIRE(sjf.size() == 3);
  CHECK(ttft_ns(sjf[1]) == ms(4));
  CHECK(ttft_ns(sjf[2]) == ms(8));
  CHECK(sjf[2].finish.count_ns() == ms(11));
  CHECK(ttft_ns(sjf[0]) == ms(15));
  CHECK(sjf[0].finish.count_ns() == ms(21));
  const auto fcfs = run_requests(trace_scenario(rows, k_linear, one_seat("fcfs"), k_kv));
  CHECK(ttft_ns(fcfs[0]) == ms(4));
  CHECK(ttft_ns(fcfs[1]) == ms(14));
  CHECK(ttft_ns(fcfs[2]) == ms(18));
}

TEST_CASE("queue order: edf serves the earliest TTFT deadline first, then those without",
          "[schedulers]") {
  // busy (t=0, no target) holds the seat until 4 ms; a (t=1 ms, target 300 ms: deadline 301),
  // b (t=2, 200: 202) and c (t=3, 100: 103) wait, deadlines reversed from arrival order, and
  // late (t=3, no target) after them. Each: 2-token prompt, 1 token, 4 ms alone.
  //   t=4 c -> 8 (TTFT 5); t=8 b -> 12 (TTFT 10); t=12 a -> 16 (TTFT 15); t=16 late -> 20.
  const std::string parts =
      component("busy", "0,2,1\n", "") + component("a", "0.001,2,1\n", ", ttft_slo_ms: 300") +
      component("b", "0.002,2,1\n", ", ttft_slo_ms: 200") +
      component("c", "0.003,2,1\n", ", ttft_slo_ms: 100") + component("late", "0.003,2,1\n", "");
  const auto edf = run_requests(mix_scenario(parts, "edf"));
  REQUIRE(edf.size() == 5);  // ids in merged order: busy, a, b, c, late
  CHECK(edf[0].first_token.count_ns() == ms(4));
  CHECK(ttft_ns(edf[3]) == ms(5));
  CHECK(ttft_ns(edf[2]) == ms(10));
  CHECK(ttft_ns(edf[1]) == ms(15));
  CHECK(edf[4].first_token.count_ns() == ms(20));
  // fcfs: a, b, c, late in arrival order.
  const auto fcfs = run_requests(mix_scenario(parts, "fcfs"));
  CHECK(fcfs[1].first_token.count_ns() == ms(8));
  CHECK(fcfs[3].first_token.count_ns() == ms(16));
}

TEST_CASE("queue order: fair picks the tenant with the least counter and lifts a returning one",
          "[schedulers]") {
  // Tenant heavy sends H0..H3 at t=0, tenant light L0 at t=0 and L1 at t=9 ms; each request a
  // 2-token prompt and 1 token, 4 ms alone, charged 1 x 2 prompt + 2 x 1 output = 4.
  //   t=0  counters heavy 0, light 0: the first in the queue, H0        -> heavy 4
  //   t=4  light 0 < 4: L0                                               -> light 4
  //   t=8  4 = 4: the first in the queue, H1                             -> heavy 8
  //   t=12 light is back (L1 came at 9): lifted to heavy's 8; tie: H2    -> heavy 12
  //   t=16 light 8 < 12: L1 (TTFT 16 + 4 - 9 = 11 ms)                    -> light 12
  //   t=20 H3. (Without the lift light would still be at 4 and L1 would run at 12.)
  const std::string parts = component("h", "0,2,1\n0,2,1\n0,2,1\n0,2,1\n", ", tenant: heavy") +
                            component("l", "0,2,1\n0.009,2,1\n", ", tenant: light");
  const auto fair = run_requests(mix_scenario(parts, "fair"));
  REQUIRE(fair.size() == 6);  // ids: H0..H3 (0-3), L0 (4), L1 (5)
  CHECK(fair[0].first_token.count_ns() == ms(4));
  CHECK(fair[4].first_token.count_ns() == ms(8));
  CHECK(fair[1].first_token.count_ns() == ms(12));
  CHECK(fair[2].first_token.count_ns() == ms(16));
  CHECK(ttft_ns(fair[5]) == ms(11));
  CHECK(fair[3].first_token.count_ns() == ms(24));
  // fcfs: L0 waits behind all of heavy's requests.
  const auto fcfs = run_requests(mix_scenario(parts, "fcfs"));
  CHECK(fcfs[4].first_token.count_ns() == ms(20));
}

TEST_CASE("queue order: the lognormal predictor is a function of seed and request id",
          "[schedulers]") {
  QueueOrder o;
  o.policy = QueuePolicy::Sjf;
  RequestSpec r;
  r.output_tokens = 100;
  CHECK(o.predicted_output_tokens(r) == 100);  // oracle
  o.sjf_oracle = false;
  o.sjf_sigma = 0;
  CHECK(o.predicted_output_tokens(r) == 100);  // no error
  o.sjf_sigma = 1;
  std::vector<int64_t> first, again, other;
  for (uint64_t id = 0; id < 50; ++id) {
    r.id = id;
    first.push_back(o.predicted_output_tokens(r));
  }
  for (uint64_t id = 50; id-- > 0;) {  // another order: the same predictions
    r.id = id;
    again.insert(again.begin(), o.predicted_output_tokens(r));
  }
  o.sjf_seed = 2;
  for (uint64_t id = 0; id < 50; ++id) {
    r.id = id;
    other.push_back(o.predicted_output_tokens(r));
  }
  CHECK(first == again);
  CHECK(first != other);
  const auto [lo, hi] = std::minmax_element(first.begin(), first.end());
  CHECK(*lo < 100);
  CHECK(*hi > 100);
  // Whole runs: the same seed gives the same schedule.
  const std::string rows = "0,2,30\n0,2,10\n0,2,20\n0,2,5\n0,2,40\n";
  const std::string sched =
      "{kind: continuous, max_num_seqs: 1, policy: sjf, sjf: {predictor: lognormal, sigma: 2, "
      "seed: 7}}";
  const auto a = run_requests(trace_scenario(rows, k_linear, sched, k_kv));
  const auto b = run_requests(trace_scenario(rows, k_linear, sched, k_kv));
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].first_token == b[i].first_token);
}

TEST_CASE("queue order: bad policy keys are refused with exit status 2", "[schedulers]") {
  const std::string cfg =
      write_temp("q.yaml", trace_scenario("0,2,1\n", k_linear, one_seat("fcfs"), k_kv));
  const auto run = [&](const std::string& set) {
    return cli({"run", cfg, "--out", (temp_dir() / "o").string(), "-q", "--set", set});
  };
  CliResult r = run("scheduler.policy=shortest");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("scheduler.policy") && Catch::Contains("shortest") &&
                        Catch::Contains("fcfs, priority, sjf, edf, fair"));
  r = run("scheduler.sjf={predictor: psychic}");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("scheduler.sjf.predictor") && Catch::Contains("lognormal"));
  r = run("scheduler.sjf={predictor: oracle, sigma: 1}");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("is only used with predictor: lognormal"));
  r = run("scheduler.fair={prompt_weight: 0, output_weight: 0}");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("nothing would count"));
  r = run("scheduler.fair={prompt_weight: -1}");
  CHECK(r.code == 2);
  // An engine preset takes only the orders its engine has.
  r = run("scheduler={kind: vllm, enable_prefix_caching: false, scheduling_policy: sjf}");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("fcfs, priority"));
}

TEST_CASE("queue order: every policy serves every request under preemption, deterministically",
          "[schedulers]") {
  // Two tenants, a KV cache small enough to preempt often: victims chosen by the order (sjf,
  // edf, priority) may sit before the request asking for room, and fair picks out of order.
  const std::string part =
      "synthetic: {requests: 60, arrival: {kind: poisson, rate_per_s: 200},"
      " prompt_tokens: {kind: uniform, min: 8, max: 120}, output_tokens: {kind: uniform, min: 1,"
      " max: 80}}";
  const std::string base =
      "workload:\n  mix:\n    components:\n"
      "    - {name: a, tenant: a, ttft_slo_ms: 50, priority: 1, " +
      part +
      "}\n"
      "    - {name: b, tenant: b, ttft_slo_ms: 20, " +
      part +
      "}\n"
      "step_time: " +
      k_linear +
      "\nkv: {policy: paged, capacity_tokens: 320, block_size: 16}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 64, "
      "chunked_prefill: true, sjf: {predictor: lognormal, sigma: 1}, policy: ";
  for (const char* policy : {"fcfs", "priority", "sjf", "edf", "fair"}) {
    INFO(policy);
    const RunOutput one = run_scenario(doc_of(base + policy + "}\n"), true);
    const RunOutput two = run_scenario(doc_of(base + policy + "}\n"), true);
    CHECK(one.summary.finished == 120);
    CHECK(one.summary.preemptions > 0);
    CHECK(one.requests_csv == two.requests_csv);
  }
}

TEST_CASE("queue order: sglang's lof admits the longest output first", "[schedulers]") {
  // One seat, the sjf case's three requests: r0 (3 tokens), r1 (1), r2 (2), all at t=0.
  // t=0 r0 prefill -> 4 (TTFT 4), decodes -> 10; t=10 r2 prefill -> 14, decode -> 17;
  // t=17 r1 prefill -> 21.
  const auto lof = run_requests(
      trace_scenario("0,2,3\n0,2,1\n0,2,2\n", k_linear,
                     "{kind: sglang, max_running_requests: 1, schedule_policy: lof}", k_kv));
  REQUIRE(lof.size() == 3);
  CHECK(lof[0].first_token.count_ns() == ms(4));
  CHECK(lof[0].finish.count_ns() == ms(10));
  CHECK(lof[2].first_token.count_ns() == ms(14));
  CHECK(lof[1].first_token.count_ns() == ms(21));
  CHECK_THAT(input_error_of(trace_scenario("0,2,1\n", k_linear,
                                           "{kind: sglang, schedule_policy: random}", k_kv)),
             Catch::Contains("not modelled") && Catch::Contains("fcfs, lpm, lof and dfs-weight"));
}

}  // namespace t_schedulers_queue_order_test
