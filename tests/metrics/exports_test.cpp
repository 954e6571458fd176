// Inter-token latency, mean/median/std/percentiles with numpy's definitions, and the
// `vllm bench serve` result JSON (metrics/exports.h, docs/metrics.md#inter-token-latency-itl),
// on a tiny trace whose every time is worked out by hand.
#include "metrics/exports.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support.h"

namespace t_metrics_exports_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// The trace of tests/metrics/slo_test.cpp: every step lasts 10 ms per sequence; two seats.
// r0 (t=0, prompt 1, 3 tokens), r1 (t=0, 1, 2), r2 (t=0, 1, 1), r3 (prompt 1000: rejected),
// r4 (t=100 ms, 1, 2).
// t=0   prefill r0, r1: 20 ms               -> t=20: r0, r1 token 1
// t=20  decode r0, r1: 20 ms                -> t=40: r0 token 2, r1 done
// t=40  decode r0 + prefill r2: 20 ms       -> t=60: r0 done, r2 done (one token)
// t=100 prefill r4 -> t=110 token 1; decode -> t=120 done
// Step ends: 20, 40, 60, 110, 120 ms. Token gaps: r0 40-20, 60-40; r1 40-20; r4 120-110.
// ITL = {20, 20, 20, 10} ms: mean 17.5, median 20, std sqrt((3 x 2.5^2 + 7.5^2) / 4)
// = sqrt(18.75) = 4.33013, p25 = 10 + 0.75 x 10 = 17.5 (linear, position 0.25 x 3).
// TTFT = {20, 20, 60, 10}: mean 27.5, median 20, std sqrt((2 x 7.5^2 + 32.5^2 + 17.5^2) / 4)
// = sqrt(368.75) = 19.20286. TPOT = {20, 20, 10}: mean 16.667, median 20.
// E2E = {60, 40, 60, 20}: mean 45, median 50. Duration 0.12 s; 4 of 5 completed;
// input 4 tokens, output 3 + 2 + 1 + 2 = 8.
const std::string k_rows = "0,1,3\n0,1,2\n0,1,1\n0,1000,1\n0.1,1,2\n";

std::string scenario() {
  return trace_scenario(k_rows, "{kind: linear, per_seq_ms: 10}",
                        "{kind: continuous, max_num_seqs: 2}",
                        "{policy: paged, capacity_tokens: 100, block_size: 1}");
}

struct Ran {
  TokenTimes tokens;
  RunOutput out;
};

void run(Ran& r, const std::string& yaml) {
  RunOptions o;
  o.no_requests_csv = true;
  o.step_observers.push_back(&r.tokens);
  o.request_recorders.push_back(&r.tokens);
  r.out = run_scenario(build_scenario(doc_of(yaml)), o);
}

}  // namespace

TEST_CASE("exports: ITL pools every gap between consecutive tokens", "[metrics]") {
  Ran r;
  run(r, scenario());
  std::vector<double> itl_ms;
  for (double s : r.tokens.itls_s()) itl_ms.push_back(s * 1e3);
  REQUIRE(itl_ms.size() == 4);
  const std::vector<RequestTimes>& rs = r.tokens.requests();
  REQUIRE(rs.size() == 5);
  CHECK(rs[0].itl_end - rs[0].itl_begin == 2);
  CHECK(rs[2].itl_end == rs[2].itl_begin);  // one token: no gap
  CHECK_FALSE(rs[3].finished);
  CHECK(r.tokens.stall_placed_requests() == 0);

  const LatencyReport lat = latency_report(r.tokens, {25, 50, 99});
  CHECK(lat.itl.count == 4);
  CHECK(lat.itl.mean == Approx(0.0175));
  CHECK(lat.itl.median == Approx(0.020));
  CHECK(lat.itl.std == Approx(std::sqrt(18.75) * 1e-3));
  CHECK(lat.itl.percentiles[0].second == Approx(0.0175));
  CHECK(lat.itl.percentiles[2].second == Approx(0.020));
  CHECK(lat.ttft.mean == Approx(0.0275));
  CHECK(lat.ttft.median == Approx(0.020));
  CHECK(lat.ttft.std == Approx(std::sqrt(368.75) * 1e-3));
  CHECK(lat.tpot.count == 3);
  CHECK(lat.tpot.mean == Approx(50.0 / 3 * 1e-3));
  CHECK(lat.e2e.mean == Approx(0.045));
  CHECK(lat.e2e.median == Approx(0.050));
}

TEST_CASE("exports: vllm-bench JSON has vLLM's keys, units and values", "[metrics]") {
  Ran r;
  run(r, scenario());
  std::ostringstream text;
  write_vllm_bench_json(text, r.out.summary, r.tokens, {50, 99.9});
  const nlohmann::json j = nlohmann::json::parse(text.str());
  CHECK(j["duration"].get<double>() == Approx(0.12));
  CHECK(j["completed"] == 4);
  CHECK(j["failed"] == 1);
  CHECK(j["total_input_tokens"] == 4);
  CHECK(j["total_output_tokens"] == 8);
  CHECK(j["request_throughput"].get<double>() == Approx(4 / 0.12));
  CHECK(j["output_throughput"].get<double>() == Approx(8 / 0.12));
  CHECK(j["total_token_throughput"].get<double>() == Approx(12 / 0.12));
  CHECK(j["request_goodput"].is_null());  // no slo section
  CHECK(j["mean_itl_ms"].get<double>() == Approx(17.5));
  CHECK(j["median_itl_ms"].get<double>() == Approx(20));
  CHECK(j["std_itl_ms"].get<double>() == Approx(std::sqrt(18.75)));
  CHECK(j["p50_ttft_ms"].get<double>() == Approx(20));
  CHECK(j["p99.9_e2el_ms"].get<double>() == Approx(60));  // position 2.997 of {20, 40, 60, 60}
  CHECK(j["mean_e2el_ms"].get<double>() == Approx(45));
  CHECK(j.contains("p99.9_tpot_ms"));
  CHECK_FALSE(j.contains("p99_ttft_ms"));
  // Per request, in id order, seconds; the rejected one as vLLM writes a failed request.
  CHECK(j["input_lens"] == nlohmann::json({1, 1, 1, 1000, 1}));
  CHECK(j["output_lens"] == nlohmann::json({3, 2, 1, 0, 2}));
  CHECK(j["ttfts"][4].get<double>() == Approx(0.010));
  CHECK(j["itls"][0].size() == 2);
  CHECK(j["itls"][0][1].get<double>() == Approx(0.020));
  CHECK(j["itls"][4][0].get<double>() == Approx(0.010));
  CHECK(j["itls"][3].empty());
  CHECK(j["errors"][0] == "");
  CHECK(j["errors"][3] != "");
  // Tokens in second 0 after the first arrival: all 8; every request overlaps second 0.
  CHECK(j["max_output_tokens_per_s"].get<double>() == 8);
  CHECK(j["max_concurrent_requests"] == 4);
}

TEST_CASE("exports: request_goodput is the SLO goodput", "[metrics]") {
  // TTFT target 25 ms: r0, r1, r4 meet it (r2's is 60 ms): 3 / 0.12 s.
  Ran r;
  run(r, scenario() + "slo: {ttft_ms: 25}\n");
  std::ostringstream text;
  write_vllm_bench_json(text, r.out.summary, r.tokens, {99});
  const nlohmann::json j = nlohmann::json::parse(text.str());
  CHECK(j["request_goodput"].get<double>() == Approx(3 / 0.12));
  // The offered rate: 5 requests over their arrivals' span, 0 to 100 ms.
  CHECK(j["request_rate"].get<double>() == Approx(50));
}

TEST_CASE("exports: request_rate is over the span of the arrivals, wherever they start",
          "[metrics]") {
  // Three requests at 1.0, 1.2 and 1.5 s: 3 over 0.5 s, not over the time since 0.
  Ran r;
  run(r, trace_scenario("1.0,1,2\n1.2,1,2\n1.5,1,2\n", "{kind: linear, per_seq_ms: 10}",
                        "{kind: continuous, max_num_seqs: 2}",
                        "{policy: paged, capacity_tokens: 100, block_size: 1}"));
  std::ostringstream text;
  write_vllm_bench_json(text, r.out.summary, r.tokens, {99});
  CHECK(nlohmann::json::parse(text.str())["request_rate"].get<double>() == Approx(6));
}

TEST_CASE("exports: a stall between tokens is one gap after the first token", "[metrics]") {
  // Replica 0's steps end at 10, 20, 30, 40, 50 ms. A request with tokens at 10 and 50 ms and
  // 3 in all was in 2 of the 4 steps after its first token: its gaps are taken as
  // 40 - 10 = 30 and 50 - 40 = 10 ms (sum 40 ms, exact). One with 5 tokens from 10 to 50 ms was
  // in all 4: gaps of 10 ms, exact. One with 4 tokens from 10 to 50 ms was in all 4 steps but
  // has 3 gaps: the stall is taken as its first gap, to the third-last step end (20, 10, 10 ms).
  TokenTimes t;
  StepRecord s;
  for (int k = 0; k < 5; ++k) {
    s.start = Time::ns(ms(10.0 * k));
    s.duration = Time::ns(ms(10));
    t.on_step(s);
  }
  Request a;
  a.spec.id = 1;
  a.spec.output_tokens = 3;
  a.state = RequestState::Released;
  a.first_token = Time::ns(ms(10));
  a.last_token = a.release = Time::ns(ms(50));
  Request b = a;
  b.spec.id = 0;
  b.spec.output_tokens = 5;
  Request c = a;
  c.spec.id = 2;
  c.spec.output_tokens = 4;
  t.record(a);
  t.record(b);
  CHECK(t.stall_placed_requests() == 1);
  t.record(c);
  CHECK(t.stall_placed_requests() == 2);
  const std::vector<RequestTimes>& rs = t.requests();
  REQUIRE(rs[0].id == 0);
  REQUIRE(rs[2].itl_end - rs[2].itl_begin == 3);
  CHECK(t.itls_s()[rs[2].itl_begin] == Approx(0.020));
  CHECK(t.itls_s()[rs[2].itl_begin + 1] == Approx(0.010));
  CHECK(t.itls_s()[rs[2].itl_begin + 2] == Approx(0.010));
  std::vector<double> a_gaps(t.itls_s().begin() + static_cast<long>(rs[1].itl_begin),
                             t.itls_s().begin() + static_cast<long>(rs[1].itl_end));
  REQUIRE(a_gaps.size() == 2);
  CHECK(a_gaps[0] == Approx(0.030));
  CHECK(a_gaps[1] == Approx(0.010));
  CHECK(rs[0].itl_end - rs[0].itl_begin == 4);
  CHECK(t.itls_s()[rs[0].itl_begin] == Approx(0.010));
}

TEST_CASE("exports: numpy's median, std and percentiles", "[metrics]") {
  // {1, 2, 3, 4}: mean 2.5, median 2.5, std sqrt(1.25), p90 at position 2.7: 3.7.
  const LatencyStats s = latency_stats({4, 1, 3, 2}, {90, 0, 100});
  CHECK(s.mean == 2.5);
  CHECK(s.median == 2.5);
  CHECK(s.std == Approx(std::sqrt(1.25)));
  CHECK(s.percentiles[0].second == Approx(3.7));
  CHECK(s.percentiles[1].second == 1);
  CHECK(s.percentiles[2].second == 4);
  const LatencyStats empty = latency_stats({}, {99});
  CHECK(empty.mean == 0);
  CHECK(empty.percentiles[0].second == 0);
  CHECK(percentile_word(99) == "99");
  CHECK(percentile_word(99.9) == "99.9");
  CHECK(percentile_word(12.5) == "12.5");
}

TEST_CASE("exports: --percentiles and --export on servesim run", "[metrics][cli]") {
  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "c.yaml") << scenario();
  const CliResult r = cli({"run", (dir / "c.yaml").string(), "--out", (dir / "o").string(),
                           "--no-progress", "--percentiles", "50,99.9", "--export", "vllm-bench"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("ITL") != std::string::npos);
  CHECK(r.out.find("p99.9") != std::string::npos);
  std::ifstream in(dir / "o" / "vllm-bench.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j.contains("p99.9_itl_ms"));
  CHECK(j.contains("p50_itl_ms"));

  // Without the options: no export, and a stale one is removed.
  const CliResult plain =
      cli({"run", (dir / "c.yaml").string(), "--out", (dir / "o").string(), "-q"});
  REQUIRE(plain.code == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "o" / "vllm-bench.json"));

  const CliResult bad = cli({"run", (dir / "c.yaml").string(), "--out", (dir / "b").string(), "-q",
                             "--percentiles", "50,101"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--percentiles \"50,101\": \"101\" is not a percentile") != std::string::npos);
  // The bounds themselves are percentiles: p0 is the least value, p100 the greatest.
  const CliResult ends = cli({"run", (dir / "c.yaml").string(), "--out", (dir / "e").string(), "-q",
                              "--percentiles", "0,100", "--export", "vllm-bench"});
  REQUIRE(ends.code == 0);
  std::ifstream ein(dir / "e" / "vllm-bench.json");
  const nlohmann::json e = nlohmann::json::parse(ein);
  CHECK(e["p0_ttft_ms"].get<double>() <= e["median_ttft_ms"].get<double>());
  CHECK(e["p100_ttft_ms"].get<double>() >= e["median_ttft_ms"].get<double>());
  CHECK(parse_percentiles("0", "--percentiles") == std::vector<double>{0});
  CHECK_THROWS_WITH(parse_percentiles("-0.5", "--percentiles"),
                    Catch::Contains("\"-0.5\" is not a percentile"));
  const CliResult fmt_bad = cli(
      {"run", (dir / "c.yaml").string(), "--out", (dir / "b").string(), "-q", "--export", "genai"});
  CHECK(fmt_bad.code == 2);
  CHECK(fmt_bad.err.find(
            "--export \"genai\": unknown format (valid: genai-perf, vidur, vllm-bench)") !=
        std::string::npos);
}

TEST_CASE("exports: Vidur's request_metrics.csv columns and values", "[metrics]") {
  // r2 (id 2): queued 0 -> 40 ms (no seat), prefilled in the 20 ms step 40 -> 60 ms, which
  // gave its only token: e2e 60 ms, execution 20 ms, preemption 0, scheduling delay 40 ms,
  // prefill e2e 60 ms, 20 ms from scheduling to its first token, 0 after it. r0: three steps
  // of 20 ms from 0 to 60 ms: execution 60 ms, e2e 60 ms. r3 was rejected: lengths only.
  Ran r;
  run(r, scenario());
  std::ostringstream text;
  write_vidur_request_metrics(text, r.tokens);
  std::istringstream in(text.str());
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream ls(line);
    for (std::string f; std::getline(ls, f, ',');) fields.push_back(f);
    if (!line.empty() && line.back() == ',') fields.emplace_back();
    rows.push_back(fields);
  }
  REQUIRE(rows.size() == 6);
  REQUIRE(rows[0].size() == 21);
  CHECK(rows[0][0] == "Request Id");
  CHECK(rows[0][1] == "request_e2e_time");
  CHECK(rows[0][20] == "request_num_restarts");
  const auto num = [](const std::string& s) { return std::stod(s); };
  const std::vector<std::string>& r2 = rows[3];
  REQUIRE(r2.size() == 21);
  const std::vector<double> expected{2,    0.06, 0.06, 0.02, 0.02, 0.02, 0.02, 0, 0.04, 0.02, 0.02,
                                     0.06, 0.02, 0.02, 0,    0,    2,    1,    1, 1,    0};
  for (size_t k = 0; k < expected.size(); ++k) {
    INFO("column " << rows[0][k]);
    CHECK(num(r2[k]) == Approx(expected[k]).margin(1e-12));
  }
  CHECK(num(rows[1][3]) == Approx(0.06));  // r0's execution time
  // r4 arrives at 100 ms and is scheduled at once: its delay counts from its own arrival.
  REQUIRE(rows[5].size() == 21);
  CHECK(num(rows[5][8]) == Approx(0).margin(1e-12));
  CHECK(num(rows[5][1]) == Approx(0.02));  // e2e from arrival: 100 -> 120 ms
  CHECK(rows[1][15].empty());              // no inter-arrival delay before the first request
  const std::vector<std::string>& r3 = rows[4];
  REQUIRE(r3.size() == 21);
  CHECK(r3[1].empty());
  CHECK(r3[17] == "1000");
  CHECK(r3[19].empty());
}

TEST_CASE("exports: Vidur's inter-arrival delay is the gap to the previous request's arrival",
          "[metrics]") {
  // Arrivals at 0, 50 and 125 ms: no delay before the first, then 50 and 75 ms.
  Ran r;
  run(r, trace_scenario("0,1,1\n0.05,1,1\n0.125,1,1\n", "{kind: linear, per_seq_ms: 10}",
                        "{kind: continuous, max_num_seqs: 2}",
                        "{policy: paged, capacity_tokens: 100, block_size: 1}"));
  std::ostringstream text;
  write_vidur_request_metrics(text, r.tokens);
  std::istringstream in(text.str());
  std::vector<std::string> delays;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream ls(line);
    for (std::string f; std::getline(ls, f, ',');) fields.push_back(f);
    REQUIRE(fields.size() > 15);
    delays.push_back(fields[15]);
  }
  REQUIRE(delays.size() == 4);
  CHECK(delays[1].empty());
  CHECK(std::stod(delays[2]) == Approx(0.05).margin(1e-12));
  CHECK(std::stod(delays[3]) == Approx(0.075).margin(1e-12));
}

TEST_CASE("exports: GenAI-Perf's profile export names, units and values", "[metrics]") {
  // The finished requests of the trace above (r3 rejected): TTFT {20, 20, 60, 10} ms; GenAI-Perf's
  // per-request ITL, (latency - TTFT) / (tokens - 1), is TPOT {20, 20, 10} ms (r2 has one
  // token); latency {60, 40, 60, 20} ms; output tokens / latency {3 / 0.06, 2 / 0.04, 1 / 0.06,
  // 2 / 0.02} = {50, 50, 16.667, 100} tokens/s; output lengths {3, 2, 1, 2}, prompts all 1.
  // Sorted TTFT {10, 20, 20, 60}: p25 at position 0.75 = 17.5, p99 at 2.97 = 20 + 0.97 x 40.
  Ran r;
  run(r, scenario() + "slo: {ttft_ms: 25}\n");
  std::ostringstream text;
  write_genai_perf_json(text, r.out.summary, r.tokens, {99.9});
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.str());
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"time_to_first_token", "inter_token_latency",
                                         "request_latency", "output_token_throughput_per_request",
                                         "output_sequence_length", "input_sequence_length",
                                         "output_token_throughput", "request_goodput",
                                         "request_throughput", "request_count", "input_config"});
  const auto& ttft = j["time_to_first_token"];
  std::vector<std::string> stat_keys;
  for (const auto& [k, v] : ttft.items()) stat_keys.push_back(k);
  CHECK(stat_keys == std::vector<std::string>{"unit", "avg", "p1", "p5", "p10", "p25", "p50", "p75",
                                              "p90", "p95", "p99", "p99.9", "min", "max", "std"});
  CHECK(ttft["unit"] == "ms");
  CHECK(ttft["avg"].get<double>() == Approx(27.5));
  CHECK(ttft["min"].get<double>() == Approx(10));
  CHECK(ttft["max"].get<double>() == Approx(60));
  CHECK(ttft["p25"].get<double>() == Approx(17.5));
  CHECK(ttft["p50"].get<double>() == Approx(20));
  CHECK(ttft["p99"].get<double>() == Approx(58.8));
  CHECK(ttft["std"].get<double>() == Approx(std::sqrt(368.75)));
  const auto& itl = j["inter_token_latency"];
  CHECK(itl["avg"].get<double>() == Approx(50.0 / 3));
  CHECK(itl["min"].get<double>() == Approx(10));
  CHECK(itl["p50"].get<double>() == Approx(20));
  CHECK(j["request_latency"]["avg"].get<double>() == Approx(45));
  CHECK(j["request_latency"]["p50"].get<double>() == Approx(50));
  CHECK(j["output_token_throughput_per_request"]["unit"] == "tokens/sec");
  CHECK(j["output_token_throughput_per_request"]["avg"].get<double>() ==
        Approx((50 + 50 + 50.0 / 3 + 100) / 4));
  CHECK(j["output_sequence_length"]["unit"] == "tokens");
  CHECK(j["output_sequence_length"]["avg"].get<double>() == 2);
  CHECK(j["output_sequence_length"]["min"].get<double>() == 1);
  CHECK(j["input_sequence_length"]["max"].get<double>() == 1);
  CHECK(j["output_token_throughput"]["avg"].get<double>() == Approx(8 / 0.12));
  CHECK(j["output_token_throughput"]["unit"] == "tokens/sec");
  CHECK(j["request_throughput"]["avg"].get<double>() == Approx(4 / 0.12));
  CHECK(j["request_throughput"]["unit"] == "requests/sec");
  CHECK(j["request_goodput"]["avg"].get<double>() == Approx(3 / 0.12));  // as vllm-bench's
  CHECK(j["request_count"]["avg"] == 4);
  CHECK(j["request_throughput"].size() == 2);  // a rate: unit and avg only, as GenAI-Perf

  // Without an slo section there is no goodput; from the command, the file is named as
  // GenAI-Perf names it.
  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "c.yaml") << scenario();
  const CliResult c = cli({"run", (dir / "c.yaml").string(), "--out", (dir / "o").string(), "-q",
                           "--export", "genai-perf"});
  REQUIRE(c.code == 0);
  std::ifstream in(dir / "o" / "profile_export_genai_perf.json");
  const nlohmann::json f = nlohmann::json::parse(in);
  CHECK_FALSE(f.contains("request_goodput"));
  CHECK(f["time_to_first_token"]["p50"].get<double>() == Approx(20));
  CHECK_FALSE(f["time_to_first_token"].contains("p99.9"));
}

}  // namespace t_metrics_exports_test
