// A sweep point's measured columns (sizing/sweep_run.cpp fill_metrics, docs/sizing.md) are the
// figures of the run they come from, field by field: the same overrides run alone through
// run_probe give the summary each column is read from. And min_replicas at its two ends: a point
// met at one replica, and one no replica count up to max_replicas meets.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "metrics/exports.h"
#include "models/catalog.h"
#include "sizing/sweep.h"
#include "sizing/sweep_run.h"
#include "tests/support.h"

namespace t_sizing_point_metrics_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

// 24 requests at 40/s on Llama 3.1 8B (roofline on the H100, which has power figures), two at a
// time: a bucket of 20/s sheds some (11), a 0.2 s timeout times some out (6 on one replica, 5 on
// two), and one is cancelled mid-reply.
const std::string k_base = R"(workload:
  synthetic:
    requests: 24
    arrival: {kind: fixed, rate_per_s: 40}
    prompt_tokens: {kind: fixed, value: 300}
    output_tokens: {kind: fixed, value: 40}
step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16}
scheduler: {kind: continuous, max_num_seqs: 2, max_num_batched_tokens: 2048}
kv: {policy: paged, block_size: 16, capacity_tokens: 100000}
admission: {rate_limit: {rate_per_s: 20, burst: 2}}
abandonment: {timeout_s: 0.2, cancel: {fraction: 0.5}}
seed: 3
)";

SweepSpec write_sweep(const std::string& sweep, const std::string& base) {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "base.yaml") << base;
  std::ofstream(dir / "s.yaml") << sweep;
  return load_sweep((dir / "s.yaml").string());
}

double h100_price() {
  return load_hardware("h100-sxm", ".").require_price("on_demand").usd_per_hour;
}

}  // namespace

TEST_CASE("point metrics: every measured column is the run's own figure", "[sizing][size]") {
  const SweepSpec spec = write_sweep(
      "base: base.yaml\nslo: {ttft_ms: 150, tpot_ms: 50}\naxes:\n  replicas: [1, 2]\n", k_base);
  for (size_t i : {size_t{0}, size_t{1}}) {
    INFO("point " << i);
    const PointResult r = evaluate_point(spec, i);
    const Probe p = run_probe(spec.base_text, spec.base_file, spec.overrides(i));
    REQUIRE(p.built);
    const Summary& s = p.summary;
    REQUIRE(r.feasible);
    CHECK(r.reason.empty());
    CHECK(r.run_replicas == 0);  // fixed mode
    CHECK(r.replicas == static_cast<int64_t>(i) + 1);
    CHECK(r.accelerators == static_cast<int64_t>(i) + 1);
    REQUIRE(r.cost_per_hour_usd.has_value());
    CHECK(*r.cost_per_hour_usd == Approx(h100_price() * static_cast<double>(i + 1)));
    CHECK(r.requests_per_s == s.requests_per_s);
    CHECK(r.output_tokens_per_s == s.output_tokens_per_s);
    REQUIRE(r.tokens_per_usd.has_value());
    CHECK(*r.tokens_per_usd == Approx(s.output_tokens_per_s * 3600.0 / *r.cost_per_hour_usd));
    REQUIRE(s.energy.has_value());
    REQUIRE(r.tokens_per_joule.has_value());
    CHECK(*r.tokens_per_joule == s.energy->output_tokens_per_joule);
    CHECK(r.ttft_p50_ms == s.ttft_s.p50 * 1e3);
    CHECK(r.ttft_p99_ms == s.ttft_s.p99 * 1e3);
    CHECK(r.tpot_p50_ms == s.tpot_s.p50 * 1e3);
    CHECK(r.tpot_p99_ms == s.tpot_s.p99 * 1e3);
    CHECK(r.e2e_p99_ms == s.e2e_s.p99 * 1e3);
    // The percentiles differ from each other, so a column read from its neighbour shows.
    CHECK(s.ttft_s.p50 != s.ttft_s.p99);
    CHECK(s.tpot_s.p50 != s.tpot_s.p99);
    CHECK(s.e2e_s.p99 != s.ttft_s.p99);
    REQUIRE(s.slo.has_value());
    CHECK(r.goodput_req_per_s == s.slo->goodput_per_s);
    CHECK(r.slo_attainment == s.slo->attainment);
    CHECK(s.slo->goodput_per_s > 0);
    CHECK(s.slo->attainment > 0);
    // Shed, timed out and cancelled requests all happen here, each a different count.
    REQUIRE(s.by_status.has_value());
    CHECK(r.rejected == s.by_status->rejected);
    CHECK(r.shed == s.by_status->shed);
    CHECK(r.timed_out == s.by_status->timed_out);
    CHECK(r.cancelled == s.by_status->cancelled);
    CHECK(s.by_status->shed > 0);
    CHECK(s.by_status->timed_out > 0);
    CHECK(s.by_status->cancelled > 0);
    CHECK(s.by_status->shed != s.by_status->timed_out);
    CHECK(s.by_status->timed_out != s.by_status->cancelled);
    // Requests not served fail the point's SLO verdict.
    CHECK_FALSE(r.meets_slo);
  }
}

TEST_CASE("point metrics: an autoscaled point pays for the accelerators held on average",
          "[sizing][size]") {
  // One replica live at the start, up to three: the queue signal adds two, so the run (about
  // 0.55 s) pays for about 2.82 replicas on average over its horizon, not the 3 it may hold.
  const std::string base = R"(workload:
  synthetic:
    requests: 30
    arrival: {kind: fixed, rate_per_s: 60}
    prompt_tokens: {kind: fixed, value: 300}
    output_tokens: {kind: fixed, value: 10}
step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16}
scheduler: {kind: continuous, max_num_seqs: 2, max_num_batched_tokens: 2048}
kv: {policy: paged, block_size: 16, capacity_tokens: 100000}
cluster:
  replicas: 1
  router: {kind: least_outstanding}
  autoscale: {signal: queue, target: 1, window_s: 0.05, min: 1, max: 3, provision_s: 0.1,
              cooldown_s: 0.05}
seed: 3
)";
  const SweepSpec spec = write_sweep("base: base.yaml\nslo: {ttft_ms: 150}\n", base);
  const PointResult r = evaluate_point(spec, 0);
  const Probe p = run_probe(spec.base_text, spec.base_file, spec.overrides(0));
  REQUIRE(p.built);
  REQUIRE(p.summary.autoscale.has_value());
  const AutoscaleSummary& a = *p.summary.autoscale;
  // A horizon under one second: the average is taken over any positive horizon.
  REQUIRE(a.horizon_s > 0);
  CHECK(a.horizon_s < 1);
  const double held = a.accelerator_hours * 3600.0 / a.horizon_s;
  CHECK(r.accelerators == 3);
  CHECK(held < 2.9);
  CHECK(held > 2.5);
  REQUIRE(r.cost_per_hour_usd.has_value());
  CHECK(*r.cost_per_hour_usd == Approx(h100_price() * held));
  REQUIRE(r.tokens_per_usd.has_value());
  CHECK(*r.tokens_per_usd == Approx(r.output_tokens_per_s * 3600.0 / (h100_price() * held)));
}

TEST_CASE("point metrics: a point under $1 an hour and a joule still has its ratios",
          "[sizing][size]") {
  // GPT-2 small on one L4 ($0.78 an hour on demand): two requests of 3 tokens end within
  // about 4 ms, about a quarter of a joule.
  const std::string base = R"(workload:
  synthetic:
    requests: 2
    arrival: {kind: fixed, rate_per_s: 1000}
    prompt_tokens: {kind: fixed, value: 8}
    output_tokens: {kind: fixed, value: 3}
step_time: {kind: roofline, model: gpt2-small, hardware: l4, weight_dtype: bf16}
scheduler: {kind: continuous, max_num_seqs: 4}
kv: {policy: paged, block_size: 16, capacity_tokens: 4096}
seed: 1
)";
  const SweepSpec spec = write_sweep("base: base.yaml\nslo: {ttft_ms: 100}\n", base);
  const PointResult r = evaluate_point(spec, 0);
  const Probe p = run_probe(spec.base_text, spec.base_file, spec.overrides(0));
  REQUIRE(p.built);
  REQUIRE(p.summary.energy.has_value());
  const double price = load_hardware("l4", ".").require_price("on_demand").usd_per_hour;
  CHECK(price < 1);
  CHECK(p.summary.energy->joules > 0);
  CHECK(p.summary.energy->joules < 1);
  REQUIRE(r.cost_per_hour_usd.has_value());
  CHECK(*r.cost_per_hour_usd == Approx(price));
  REQUIRE(r.tokens_per_usd.has_value());
  CHECK(*r.tokens_per_usd == Approx(p.summary.output_tokens_per_s * 3600.0 / price));
  REQUIRE(r.tokens_per_joule.has_value());
  CHECK(*r.tokens_per_joule == p.summary.energy->output_tokens_per_joule);
}

namespace {

// Five one-token requests arriving 1 us apart, one at a time per replica, each prefill step
// 100 ms: round-robin over k replicas, the j-th request of a replica has its first token after
// j x 100 ms (less its arrival offset). p99 TTFT (numpy's rule over 5 values: 0.96 of the way from
// the 4th to the 5th): 1 replica 496 ms, 2 replicas {100, 100, 200, 200, 300} -> 296 ms,
// 3 replicas {100, 100, 100, 200, 200} -> 200 ms, 4 replicas 196 ms.
std::string one_token_base(const std::string& cluster, int kv_tokens = 65536) {
  return "workload: {synthetic: {requests: 5, arrival: {kind: fixed, rate_per_s: 1000000},\n"
         "  prompt_tokens: {kind: fixed, value: 10}, output_tokens: {kind: fixed, value: 1}}}\n"
         "step_time: {kind: linear, base_ms: 100}\n"
         "scheduler: {kind: continuous, max_num_seqs: 1}\n" +
         fmt::format("kv: {{policy: paged, block_size: 1, capacity_tokens: {}}}\n", kv_tokens) +
         cluster;
}

PointResult min_replicas_point(const std::string& slo, int max_replicas,
                               const std::string& cluster = "") {
  const SweepSpec spec =
      write_sweep(fmt::format("base: base.yaml\nslo: {}\nmode: min_replicas\nmax_replicas: {}\n",
                              slo, max_replicas),
                  one_token_base(cluster));
  return evaluate_point(spec, 0);
}

}  // namespace

TEST_CASE("point metrics: min_replicas finds 3 by doubling to 4, then bisecting",
          "[sizing][size]") {
  // 250 ms: 2 replicas miss (296 ms), 3 meet (200 ms). Runs 1, 2, 4, then 3.
  for (const std::string cluster : {"", "cluster: {replicas: 7, router: {kind: round_robin}}\n"}) {
    INFO(cluster);
    const PointResult r = min_replicas_point("{ttft_ms: 250}", 8, cluster);
    REQUIRE(r.feasible);
    CHECK(r.meets_slo);
    CHECK(r.reason.empty());
    CHECK(r.run_replicas == 3);
    CHECK(r.replicas == 3);
    CHECK(r.accelerators == 3);
    CHECK(r.ttft_p99_ms == Approx(200).margin(0.01));
  }
}

TEST_CASE("point metrics: min_replicas keeps 4 when the bisection's 3 misses", "[sizing][size]") {
  // 198 ms: 3 replicas miss (199.997 ms), 4 meet (196 ms). Runs 1, 2, 4, then 3, which fails.
  const PointResult r = min_replicas_point("{ttft_ms: 198}", 8);
  REQUIRE(r.feasible);
  CHECK(r.meets_slo);
  CHECK(r.run_replicas == 4);
  CHECK(r.replicas == 4);
  CHECK(r.ttft_p99_ms == Approx(196).margin(0.01));
}

TEST_CASE("point metrics: min_replicas at its ends: one replica meets, or none up to the most",
          "[sizing][size]") {
  // 600 ms: one replica already meets (496 ms); it is the answer.
  const PointResult one = min_replicas_point("{ttft_ms: 600}", 8);
  REQUIRE(one.feasible);
  CHECK(one.meets_slo);
  CHECK(one.run_replicas == 1);
  CHECK(one.replicas == 1);
  CHECK(one.ttft_p99_ms == Approx(496).margin(0.01));
  // 150 ms: no count meets (every request's prefill takes 100 ms, the second on a replica 200);
  // the search stops at max_replicas = 3 (1, 2, then 3, not 4) with the row of 3 replicas,
  // feasible but not meeting, and says why.
  for (const std::string cluster : {"", "cluster: {replicas: 2, router: {kind: round_robin}}\n"}) {
    INFO(cluster);
    const PointResult none = min_replicas_point("{ttft_ms: 150}", 3, cluster);
    CHECK(none.feasible);
    CHECK_FALSE(none.meets_slo);
    CHECK(none.reason == "no replica count up to max_replicas = 3 meets the SLOs");
    CHECK(none.run_replicas == 3);
    CHECK(none.replicas == 3);
    CHECK(none.ttft_p99_ms == Approx(200).margin(0.01));
  }
}

TEST_CASE("point metrics: min_replicas stops at one replica when that is infeasible",
          "[sizing][size]") {
  // A KV cache of 8 tokens holds no 10-token prompt: every request is rejected, on any count.
  const SweepSpec spec =
      write_sweep("base: base.yaml\nslo: {ttft_ms: 600}\nmode: min_replicas\nmax_replicas: 8\n",
                  one_token_base("", 8));
  const PointResult r = evaluate_point(spec, 0);
  CHECK_FALSE(r.feasible);
  CHECK_FALSE(r.meets_slo);
  CHECK(r.run_replicas == 1);
  CHECK(r.reason.rfind("5 requests rejected (first: request 0: ", 0) == 0);
}

TEST_CASE("point metrics: a row is run again at the replicas it ran with", "[sizing][size]") {
  // min_replicas: the row of 1 replica reruns with 1, not the base's 7; a fixed-mode row (run
  // with replicas 0) reruns with its point's overrides: the base's 7.
  const std::string cluster = "cluster: {replicas: 7, router: {kind: round_robin}}\n";
  const SweepSpec min =
      write_sweep("base: base.yaml\nslo: {ttft_ms: 600}\nmode: min_replicas\nmax_replicas: 8\n",
                  one_token_base(cluster));
  const PointResult one = evaluate_point(min, 0);
  REQUIRE(one.run_replicas == 1);
  TokenTimes tokens;
  const Probe again = rerun_row(min, one, tokens);
  REQUIRE(again.built);
  CHECK(again.replicas == 1);
  CHECK(again.summary.ttft_s.p99 * 1e3 == one.ttft_p99_ms);
  CHECK(tokens.requests().size() == 5);
  const SweepSpec fixed =
      write_sweep("base: base.yaml\nslo: {ttft_ms: 600}\naxes:\n  scheduler.max_num_seqs: [1, 2]\n",
                  one_token_base(cluster));
  const PointResult row = evaluate_point(fixed, 1);
  REQUIRE(row.run_replicas == 0);
  TokenTimes more;
  const Probe base = rerun_row(fixed, row, more);
  REQUIRE(base.built);
  CHECK(base.replicas == 7);
  CHECK(more.requests().size() == 5);
}

}  // namespace t_sizing_point_metrics_test
