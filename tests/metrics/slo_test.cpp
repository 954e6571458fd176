// SLO attainment and goodput (config `slo`, docs/metrics.md#slos-and-goodput) on a tiny trace
// whose every time is worked out by hand, and the config errors of the `slo` section.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "metrics/metrics.h"
#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_slo_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Every step lasts 10 ms per sequence in it; two seats; 100 KV tokens.
// r0 (t=0, prompt 1, 3 tokens), r1 (t=0, 1, 2), r2 (t=0, 1, 1), r3 (t=0, prompt 1000: larger
// than the KV cache, rejected at arrival), r4 (t=100 ms, 1, 2).
// t=0   prefill r0, r1 (r2 waits for a seat): 2 x 10 = 20 ms -> t=20: r0, r1 token 1
// t=20  decode r0, r1: 20 ms                                 -> t=40: r0 token 2, r1 done
// t=40  decode r0 + prefill r2: 20 ms                        -> t=60: r0 done, r2 done
// t=100 prefill r4: 10 ms -> t=110 token 1; decode -> t=120 done
// TTFT: r0 20, r1 20, r2 60, r4 10 ms.  TPOT: r0 (60-20)/2 = 20, r1 (40-20)/1 = 20, r4 10 ms;
// r2 has one token, no TPOT.  Duration: 0 to 120 ms = 0.12 s.
std::string scenario(const std::string& slo) {
  return trace_scenario("0,1,3\n0,1,2\n0,1,1\n0,1000,1\n0.1,1,2\n",
                        "{kind: linear, per_seq_ms: 10}", "{kind: continuous, max_num_seqs: 2}",
                        "{policy: paged, capacity_tokens: 100, block_size: 1}") +
         slo;
}

RunOutput run(const std::string& yaml) { return run_scenario(doc_of(yaml)); }

/// The message `servesim run` prints for `yaml`, with the temporary folder cut out; checks the
/// exit status and that nothing was written.
std::string config_error(const std::string& yaml) {
  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "c.yaml") << yaml;
  const CliResult r = cli({"run", (dir / "c.yaml").string(), "--out", (dir / "o").string(), "-q"});
  CHECK(r.code == 2);
  CHECK_FALSE(std::filesystem::exists(dir / "o" / "summary.json"));
  std::string err = r.err;
  const std::string prefix = dir.string() + "/";
  for (size_t pos; (pos = err.find(prefix)) != std::string::npos;) err.erase(pos, prefix.size());
  return err;
}

const std::string k_synthetic = R"(workload:
  synthetic:
    requests: 10
    arrival: {kind: poisson, rate_per_s: 2}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: uniform, min: 1, max: 5}
step_time: {kind: linear, base_ms: 1}
scheduler: {kind: continuous, max_num_seqs: 8}
kv: {policy: paged, capacity_tokens: 1000}
)";

}  // namespace

TEST_CASE("slo: the hand-worked trace runs as its comment says", "[metrics][slo]") {
  const auto r = run_requests(scenario(""));
  REQUIRE(r.size() == 5);
  CHECK(r[0].first_token.count_ns() == ms(20));
  CHECK(r[0].last_token.count_ns() == ms(60));
  CHECK(r[1].last_token.count_ns() == ms(40));
  CHECK(r[2].first_token.count_ns() == ms(60));
  CHECK(r[3].state == RequestState::Rejected);
  CHECK(r[4].first_token.count_ns() == ms(110));
  CHECK(r[4].last_token.count_ns() == ms(120));
}

TEST_CASE("slo: per-request attainment, goodput and the run-level percentile check",
          "[metrics][slo]") {
  // TTFT <= 20 ms: r0, r1 (equal counts), r4 -> 3 of 5 (r3 was rejected: never meets).
  // TPOT <= 15 ms: r2 (one token: meets), r4 -> 2 of 5.  Both: r4 alone -> 1 of 5.
  // p50 TTFT of 10, 20, 20, 60 = 20 <= 20: met.  p50 TPOT of 10, 20, 20 = 20 > 15: missed.
  const Summary s =
      run(scenario("slo: {ttft_ms: 20, tpot_ms: 15, percentile: 50, accelerators: 4}\n")).summary;
  REQUIRE(s.slo);
  const SloSummary& slo = *s.slo;
  CHECK(slo.percentile == 50);
  REQUIRE(slo.ttft);
  CHECK(slo.ttft->target_ms == 20);
  CHECK(slo.ttft->percentile_ms == 20.0);
  CHECK(slo.ttft->met);
  CHECK(slo.ttft->requests_met == 3);
  CHECK(slo.ttft->attainment == 0.6);
  REQUIRE(slo.tpot);
  CHECK(slo.tpot->percentile_ms == 20.0);
  CHECK_FALSE(slo.tpot->met);
  CHECK(slo.tpot->requests_met == 2);
  CHECK(slo.tpot->attainment == 0.4);
  CHECK(slo.requests_met == 1);
  CHECK(slo.attainment == 0.2);
  // Goodput over the same duration as requests_per_s (4 finished / 0.12 s).
  CHECK(s.duration_s == Approx(0.12));
  CHECK(slo.goodput_per_s == Approx(1 / 0.12));
  CHECK(slo.goodput_per_s == Approx(s.requests_per_s / 4));
  CHECK(slo.accelerators == 4);
  CHECK(slo.goodput_per_s_per_accelerator == Approx(1 / 0.12 / 4));
}

TEST_CASE("slo: one target alone at the default p99, and a TPOT equal to its target meets it",
          "[metrics][slo]") {
  // TPOT <= 20 ms: r0 (40 ms over 2 gaps), r1, r2 (one token), r4 -> 4 of 5; r3 rejected.
  // p99 TPOT of 10, 20, 20: position 1.98 -> 20 <= 20: met. Goodput = requests_per_s.
  const Summary s = run(scenario("slo: {tpot_ms: 20}\n")).summary;
  REQUIRE(s.slo);
  CHECK(s.slo->percentile == 99);
  CHECK_FALSE(s.slo->ttft);
  REQUIRE(s.slo->tpot);
  CHECK(s.slo->tpot->met);
  CHECK(s.slo->tpot->requests_met == 4);
  CHECK(s.slo->requests_met == 4);
  CHECK(s.slo->attainment == 0.8);
  CHECK(s.slo->goodput_per_s == s.requests_per_s);
  CHECK(s.slo->accelerators == 1);
  // p99 TTFT of 10, 20, 20, 60: position 2.97 -> 20 + 0.97 x 40 = 58.8 ms > 20: missed.
  const Summary t = run(scenario("slo: {ttft_ms: 20}\n")).summary;
  CHECK(t.slo->ttft->percentile_ms == Approx(58.8));
  CHECK_FALSE(t.slo->ttft->met);
  CHECK(t.slo->requests_met == 3);
}

TEST_CASE("slo: a request's TPOT is compared exactly, not rounded", "[metrics][slo]") {
  // 40 ms over 3 gaps is 13.333333 1/3 ms: 13.333333 ms (13,333,333 ns) misses it,
  // 13.3333335 ms (rounded to 13,333,334 ns) meets it.
  Request r;
  r.spec.output_tokens = 4;
  r.state = RequestState::Released;
  r.first_admitted = r.first_token = Time::ns(0);
  r.last_token = r.finish = r.release = Time::from_ms(40);
  for (const auto& [target_ms, met] : {std::pair{13.333333, false}, std::pair{13.3333335, true}}) {
    SloTargets t;
    t.tpot_ms = target_ms;
    MetricsRecorder m(t);
    m.record(r);
    const Summary s = m.summary(RunStats{});
    CHECK(s.slo->tpot->requests_met == (met ? 1 : 0));
    CHECK(s.slo->tpot->met == met);
  }
}

TEST_CASE("slo: summary.json carries the slo object, null without the section", "[metrics][slo]") {
  const auto j =
      nlohmann::json::parse(run(scenario("slo: {ttft_ms: 20, tpot_ms: 15}\n")).summary_json);
  const auto& slo = j.at("slo");
  CHECK(slo.at("percentile") == 99.0);
  CHECK(slo.at("ttft").at("target_ms") == 20.0);
  CHECK(slo.at("ttft").at("met") == false);
  CHECK(slo.at("ttft").at("requests_met") == 3);
  CHECK(slo.at("tpot").at("attainment") == 0.4);
  CHECK(slo.at("requests_met") == 1);
  CHECK(slo.at("attainment") == 0.2);
  CHECK(slo.at("goodput_requests_per_s").get<double>() == Approx(1 / 0.12));
  CHECK(slo.at("accelerators") == 1);
  CHECK(slo.contains("goodput_requests_per_s_per_accelerator"));
  CHECK(nlohmann::json::parse(run(scenario("")).summary_json).at("slo").is_null());
}

TEST_CASE("slo: an e2e_ms target, vLLM's e2el goodput, counts arrival to release",
          "[metrics][slo]") {
  // E2E {60, 40, 60, 20} ms for r0, r1, r2, r4 (r3 rejected): at most 50 ms are r1 and r4, 2 of
  // the 5 requests; p99 of the four (position 2.97) is 60 ms > 50. With TTFT <= 20 ms too
  // (r0, r1, r4 meet it), the requests meeting both are still r1 and r4.
  const Summary e = run(scenario("slo: {e2e_ms: 50}\n")).summary;
  REQUIRE(e.slo);
  REQUIRE(e.slo->e2e);
  CHECK_FALSE(e.slo->ttft);
  CHECK(e.slo->e2e->requests_met == 2);
  CHECK(e.slo->e2e->attainment == 0.4);
  CHECK(e.slo->e2e->percentile_ms == Approx(60));
  CHECK_FALSE(e.slo->e2e->met);
  CHECK(e.slo->requests_met == 2);
  CHECK(e.slo->goodput_per_s == Approx(2 / 0.12));
  CHECK(run(scenario("slo: {e2e_ms: 60}\n")).summary.slo->e2e->met);  // inclusive bound
  const Summary both = run(scenario("slo: {ttft_ms: 20, e2e_ms: 50}\n")).summary;
  CHECK(both.slo->ttft->requests_met == 3);
  CHECK(both.slo->requests_met == 2);
  CHECK_THAT(summary_table(both),
             Catch::Contains("E2E p99 60.0 ms > 50 ms missed; 40.0% of requests meet both"));
  const auto j = nlohmann::json::parse(run(scenario("slo: {e2e_ms: 50}\n")).summary_json).at("slo");
  CHECK(j.at("e2e").at("target_ms") == 50.0);
  CHECK(j.at("tpot").is_null());
}

TEST_CASE("slo: with nothing finished no TTFT or E2E check is met and no percentile is given",
          "[metrics][slo]") {
  // One request, larger than the KV cache: rejected at arrival, so every distribution is empty.
  const std::string yaml = trace_scenario("0,1000,2\n", "{kind: linear, per_seq_ms: 10}",
                                          "{kind: continuous, max_num_seqs: 2}",
                                          "{policy: paged, capacity_tokens: 100, block_size: 1}") +
                           "slo: {ttft_ms: 20, tpot_ms: 15, e2e_ms: 50}\n";
  const Summary s = run(yaml).summary;
  REQUIRE(s.slo);
  CHECK_FALSE(s.slo->ttft->met);
  CHECK_FALSE(s.slo->ttft->percentile_ms.has_value());
  CHECK_FALSE(s.slo->e2e->met);
  CHECK_FALSE(s.slo->e2e->percentile_ms.has_value());
  CHECK_FALSE(s.slo->tpot->met);  // no request finished at all
  CHECK(s.slo->requests_met == 0);
}

TEST_CASE("slo: the printed summary has one slo line", "[metrics][slo]") {
  const std::string table =
      summary_table(run(scenario("slo: {ttft_ms: 20, tpot_ms: 15}\n")).summary);
  CHECK_THAT(table,
             Catch::Contains("slo        TTFT p99 58.8 ms > 20 ms missed; TPOT p99 20.0 ms > "
                             "15 ms missed; 20.0% of requests meet both; goodput 8.33 req/s "
                             "(8.33 per accelerator of 1)\n"));
  CHECK_THAT(summary_table(run(scenario("")).summary), !Catch::Contains("slo "));
}

TEST_CASE("slo: accelerators come from the step-time model, else kv.memory, else 1",
          "[metrics][slo]") {
  const auto accelerators = [](const std::string& yaml) {
    return build_scenario(doc_of(yaml)).slo->accelerators;
  };
  std::string yaml = k_synthetic + "slo: {ttft_ms: 100}\n";
  CHECK(accelerators(yaml) == 1);
  CHECK(accelerators(k_synthetic + "slo: {ttft_ms: 100, accelerators: 3}\n") == 3);
  std::string roofline = yaml;
  roofline.replace(roofline.find("{kind: linear, base_ms: 1}"), 26,
                   "{kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, tensor_parallel: 2}");
  CHECK(accelerators(roofline) == 2);
  std::string memory = yaml;
  memory.replace(memory.find("capacity_tokens: 1000"), 21,
                 "memory: {accelerator_gib: 80, tensor_parallel: 4, parameters: 69e9, layers: 80, "
                 "kv_heads: 8, head_dim: 128}");
  CHECK(accelerators(memory) == 4);
  CHECK_FALSE(build_scenario(doc_of(k_synthetic)).slo);
}

TEST_CASE("slo: bad sections are config errors with file and line", "[metrics][slo][catalog]") {
  const auto err = [](const std::string& m) { return "servesim: error: " + m + "\n"; };
  CHECK(config_error(k_synthetic + "slo: {ttft_ms: 2000, tpot_s: 0.1}\n") ==
        err("slo.tpot_s at c.yaml:10:22: unknown key (did you mean tpot_ms?) (valid here: "
            "accelerators, e2e_ms, itl_ms, percentile, tpot_ms, ttft_ms)"));
  CHECK(config_error(k_synthetic + "slo: {ttft_ms: -5}\n") ==
        err("slo.ttft_ms = \"-5\" at c.yaml:10:16: must be > 0 and <= 1000000000"));
  CHECK(config_error(k_synthetic + "slo: {tpot_ms: 0}\n") ==
        err("slo.tpot_ms = \"0\" at c.yaml:10:16: must be > 0 and <= 1000000000"));
  CHECK(config_error(k_synthetic + "slo: {ttft_ms: 2000, percentile: 0}\n") ==
        err("slo.percentile = \"0\" at c.yaml:10:34: must be > 0 and <= 100"));
  CHECK(config_error(k_synthetic + "slo: {ttft_ms: 2000, percentile: 100.5}\n") ==
        err("slo.percentile = \"100.5\" at c.yaml:10:34: must be > 0 and <= 100"));
  CHECK(config_error(k_synthetic + "slo: {ttft_ms: 2000, accelerators: 0}\n") ==
        err("slo.accelerators = \"0\" at c.yaml:10:36: must be an integer from 1 to 1048576"));
  CHECK(config_error(k_synthetic + "slo: {percentile: 90}\n") ==
        err("slo at c.yaml:10:6: needs ttft_ms, tpot_ms, e2e_ms, itl_ms or several"));
  CHECK(config_error(k_synthetic + "slo:\n") == err("slo at c.yaml:10:1: an empty section: give "
                                                    "ttft_ms, tpot_ms, e2e_ms, itl_ms or several"));
  CHECK(config_error(k_synthetic + "slo: 2000\n") ==
        err("slo = \"2000\" at c.yaml:10:6: must be a map"));
  // percentile 100 is the maximum; it is allowed.
  CHECK(build_scenario(doc_of(k_synthetic + "slo: {ttft_ms: 1, percentile: 100}\n")).slo);
}

}  // namespace t_metrics_slo_test
