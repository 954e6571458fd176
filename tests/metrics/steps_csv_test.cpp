// steps.csv (servesim run --steps, sim/steps_csv.cpp) and the engine's step observers.
#include <catch2/catch.hpp>
#include <sstream>

#include "tests/support.h"

namespace t_metrics_steps_csv_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::vector<std::vector<std::string>> rows_of(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream ls(line);
    while (std::getline(ls, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("steps.csv: one row per step, worked by hand", "[metrics][steps]") {
  // Two requests 5 ms apart, 10 ms steps: A prefills alone [0,10); B arrives at 5 and waits;
  // [10,20) decodes A and prefills B; then both decode until A (3 tokens) and B finish.
  const std::string yaml =
      "workload: {synthetic: {requests: 2, arrival: {kind: fixed, rate_per_s: 200},\n"
      "  prompt_tokens: {kind: fixed, value: 32}, output_tokens: {kind: fixed, value: 3}}}\n"
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n";
  std::ostringstream steps;
  RunOptions o;
  o.steps_csv = &steps;
  const RunOutput out = run_scenario(doc_of(yaml), o);
  const auto rows = rows_of(steps.str());
  REQUIRE(rows.size() == 1 + static_cast<size_t>(out.summary.steps));
  CHECK(rows[0][0] == "replica");
  CHECK(rows[0].back() == "flops");
  REQUIRE(rows.size() == 5);  // header + 4 steps
  // 32 prompt tokens fill two 16-token blocks; A's first decode input needs a third.
  // replica,start,duration,seqs,prefill_seqs,prefill_tokens,decode_tokens,kv_used,kv_cap,
  // waiting,running,preemptions,bound,bytes,flops (the last three empty: a linear model
  // reports no cost)
  CHECK(rows[1] == std::vector<std::string>{"0", "0.000000000", "0.010000000", "1", "1", "32", "0",
                                            "32", "4096", "0", "1", "0", "", "", ""});
  CHECK(rows[2] == std::vector<std::string>{"0", "0.010000000", "0.010000000", "2", "1", "32", "1",
                                            "80", "4096", "0", "2", "0", "", "", ""});
  CHECK(rows[3][1] == "0.020000000");
  CHECK(rows[3][3] == "2");
  CHECK(rows[3][6] == "2");
  CHECK(rows[4][3] == "1");  // A finished after its third token; B decodes its last
}

TEST_CASE("steps.csv: token and step counts agree with the summary", "[metrics][steps]") {
  const std::string yaml =
      "workload: {synthetic: {requests: 200, arrival: {kind: poisson, rate_per_s: 40},\n"
      "  prompt_tokens: {kind: uniform, min: 16, max: 400},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 60}}}\n"
      "step_time: {kind: linear, base_ms: 8, per_prefill_token_ms: 0.02,"
      " per_seq_ms: 0.1}\n"
      "scheduler: {kind: continuous, max_num_seqs: 16, max_num_batched_tokens: 256}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 3000}\n";
  std::ostringstream steps;
  RunOptions o;
  o.steps_csv = &steps;
  const RunOutput out = run_scenario(doc_of(yaml), o);
  const auto rows = rows_of(steps.str());
  REQUIRE(rows.size() == 1 + static_cast<size_t>(out.summary.steps));
  int64_t prefill = 0, decode = 0, last_preempt = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    prefill += std::stoll(rows[i][5]);
    decode += std::stoll(rows[i][6]);
    CHECK(std::stoll(rows[i][7]) <= std::stoll(rows[i][8]));
    CHECK(std::stoll(rows[i][11]) >= last_preempt);
    last_preempt = std::stoll(rows[i][11]);
  }
  CHECK(prefill == out.summary.prefill_tokens_computed);
  CHECK(decode > 0);
}

TEST_CASE("steps.csv: bytes and flops under a cost-reporting model", "[metrics][steps]") {
  // The roofline model prices each step: bytes and flops are written, and a step is
  // bandwidth-bound exactly when its intensity (flops / bytes) is at or under the ridge point,
  // peak FLOP/s over peak bandwidth (both efficiencies 1 here, so the model's ridge is the
  // chip's). The sums give it back from the summary: mbu / mfu = (bytes / peak_bw) /
  // (flops / peak_flops), so ridge = (mbu / mfu) x sum(flops) / sum(bytes), what the report
  // draws.
  const std::string yaml =
      "workload: {synthetic: {requests: 40, arrival: {kind: poisson, rate_per_s: 20},\n"
      "  prompt_tokens: {kind: uniform, min: 16, max: 2000},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 40}}}\n"
      "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16,\n"
      "  bandwidth_efficiency: 1, compute_efficiency: 1}\n"
      "scheduler: {kind: continuous, max_num_seqs: 32, max_num_batched_tokens: 4096}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 200000}\n";
  std::ostringstream steps;
  RunOptions o;
  o.steps_csv = &steps;
  const RunOutput out = run_scenario(doc_of(yaml), o);
  const auto rows = rows_of(steps.str());
  REQUIRE(rows.size() == 1 + static_cast<size_t>(out.summary.steps));
  REQUIRE(rows[0].size() == 15);
  CHECK(rows[0][13] == "bytes");
  CHECK(rows[0][14] == "flops");
  double bytes = 0, flops = 0, max_bw_intensity = 0, min_compute_intensity = 1e300;
  for (size_t i = 1; i < rows.size(); ++i) {
    REQUIRE(rows[i].size() == 15);
    const double b = std::stod(rows[i][13]), f = std::stod(rows[i][14]);
    REQUIRE(b > 0);
    REQUIRE(f > 0);
    bytes += b;
    flops += f;
    if (rows[i][12] == "bandwidth")
      max_bw_intensity = std::max(max_bw_intensity, f / b);
    else
      min_compute_intensity = std::min(min_compute_intensity, f / b);
  }
  REQUIRE(out.summary.mbu);
  REQUIRE(out.summary.mfu);
  const double ridge = *out.summary.mbu / *out.summary.mfu * flops / bytes;
  // H100 SXM: 989.4 TFLOP/s bf16 dense over 3,350 GB/s = 295.34 flops per byte.
  CHECK(ridge == Approx(989.4e12 / 3350e9).epsilon(1e-9));
  CHECK(max_bw_intensity <= ridge * (1 + 1e-9));
  if (min_compute_intensity < 1e300) CHECK(min_compute_intensity >= ridge * (1 - 1e-9));
}

}  // namespace t_metrics_steps_csv_test
