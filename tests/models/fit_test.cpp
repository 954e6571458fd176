// Fitting recovers known coefficients; importers read excerpts of the real formats.
#include "models/fit.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "cli/cli.h"
#include "core/errors.h"
#include "models/measurements.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "traces/workload_source.h"

namespace t_models_fit_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_data = std::string(SERVESIM_SOURCE_DIR) + "/tests/data";

StepShape shape(int32_t seqs, int64_t ctx, int64_t prefill) {
  StepShape s;
  s.sequences = seqs;
  s.decode_sequences = prefill > 0 ? seqs - 1 : seqs;
  s.decode_context_tokens = ctx;
  s.prefill_tokens = prefill;
  s.prefill_tokens_sq = static_cast<double>(prefill) * static_cast<double>(prefill);
  return s;
}

// Noise-free steps from known coefficients over a grid of shapes.
std::vector<StepSample> synthetic(double base, double per_seq, double per_ctx, double per_prefill,
                                  double knee_rate = 0, int64_t knee = 0) {
  std::vector<StepSample> out;
  for (int32_t seqs : {1, 2, 4, 8, 16, 32, 64})
    for (int64_t ctx_per_seq : {16, 256, 1024, 4096})
      for (int64_t prefill : {0, 64, 512}) {
        StepSample s;
        s.shape = shape(seqs, ctx_per_seq * (prefill > 0 ? seqs - 1 : seqs), prefill);
        const int64_t tokens = s.shape.prefill_tokens + s.shape.decode_sequences;
        s.ms = base + per_seq * seqs +
               per_ctx * static_cast<double>(s.shape.decode_context_tokens) +
               per_prefill * static_cast<double>(prefill) +
               knee_rate * static_cast<double>(std::max<int64_t>(0, tokens - knee));
        out.push_back(s);
      }
  return out;
}

}  // namespace

TEST_CASE("nnls: solves exactly when the solution is non-negative, clamps otherwise",
          "[models][fit]") {
  // y = 2 x1 + 3 x2 exactly.
  const auto x = nnls({{1, 0}, {0, 1}, {1, 1}, {2, 1}}, {2, 3, 5, 7});
  CHECK(x[0] == Approx(2));
  CHECK(x[1] == Approx(3));
  // y = -1 x1 + 1 x2 has a negative coefficient: the best with x1 >= 0 drops x1.
  const auto y = nnls({{1, 0}, {0, 1}, {1, 1}}, {-1, 1, 0});
  CHECK(y[0] == 0.0);
  CHECK(y[1] == Approx(0.5));
  // No rows: no terms, so no coefficients.
  CHECK(nnls({}, {}).empty());
  // When adding a term does not lower the residual, the smaller set of terms is kept: the two
  // columns are equal, so x1 alone (found first) stands and x2 stays 0.
  const auto z = nnls({{1, 1}, {2, 2}}, {2, 4});
  CHECK(z[0] == Approx(2));
  CHECK(z[1] == 0.0);
}

TEST_CASE("fit: linear recovers the coefficients that made the data", "[models][fit]") {
  const auto samples = synthetic(6.0, 0.25, 0.0001, 0.02);
  const auto m = fit_linear(samples);
  CHECK_THAT(m->yaml(), Catch::Contains("base_ms: 6\n"));
  CHECK_THAT(m->yaml(), Catch::Contains("per_seq_ms: 0.25\n"));
  CHECK_THAT(m->yaml(), Catch::Contains("per_context_token_ms: 0.0001\n"));
  CHECK_THAT(m->yaml(), Catch::Contains("per_prefill_token_ms: 0.02\n"));
  const FitReport rep = evaluate_fit(&fit_linear, samples, 5, 3, 1);
  CHECK(rep.mape_in < 1e-9);
  CHECK(rep.mape_cv < 1e-9);
  CHECK(rep.folds == 5);
  CHECK(rep.worst_cv.size() == 3);
}

TEST_CASE("fit: the hinge form finds the knee and beats the plain linear form", "[models][fit]") {
  const auto samples = synthetic(6.0, 0.1, 0.0001, 0.0, 0.03, 128);
  const auto hinge = fit_hinge(samples);
  CHECK_THAT(hinge->yaml(), Catch::Contains("knee_tokens: 128\n"));
  CHECK_THAT(hinge->yaml(), Catch::Contains("per_token_above_knee_ms: 0.03\n"));
  const FitReport h = evaluate_fit(&fit_hinge, samples, 5, 0, 1);
  const FitReport l = evaluate_fit(&fit_linear, samples, 5, 0, 1);
  CHECK(h.mape_cv < 1e-9);
  CHECK(l.mape_cv > 0.01);
}

TEST_CASE("fit: the table form averages decode steps by batch and fits a per-token prefill cost",
          "[models][fit]") {
  std::vector<StepSample> s;
  for (double ms : {10.0, 12.0}) s.push_back({shape(1, 100, 0), ms, ""});
  s.push_back({shape(8, 800, 0), 20.0, ""});
  s.push_back({shape(1, 0, 100), 11.0 + 0.5 * 100, ""});  // interp(1) = 11, 0.5 ms a token
  const auto m = fit_table(s);
  CHECK_THAT(m->yaml(), Catch::Contains("- {batch: 1, ms: 11}\n  - {batch: 8, ms: 20}\n"));
  CHECK_THAT(m->yaml(), Catch::Contains("prefill_ms_per_token: 0.5\n"));
  CHECK_THROWS_AS(fit_table({{shape(1, 0, 100), 5.0, ""}}), InputError);
}

TEST_CASE("measurements: Splitwise rows become a prefill and a decode step each", "[models][fit]") {
  MeasurementFilter f;
  f.model = "llama2-70b";
  f.hardware = "h100-80gb";
  f.tp = 4;
  const MeasurementSet set = read_splitwise(k_data + "/splitwise_excerpt.csv", f);
  REQUIRE(set.samples.size() == 24);
  // Row 1: 512-token prompt, batch 1, 128 tokens: prefill 59.56 ms; decode at context 512 + 64.
  CHECK(set.samples[0].shape.prefill_tokens == 512);
  CHECK(set.samples[0].ms == Approx(59.55572199309245));
  CHECK(set.samples[1].shape.decode_context_tokens == 576);
  CHECK(set.samples[1].ms == Approx(29.762305037895818));
  // Without a selection the file's two groups are listed.
  CHECK_THROWS_WITH(
      read_splitwise(k_data + "/splitwise_excerpt.csv", {}),
      Catch::Contains("--source-model llama2-70b --source-hardware a100-80gb --source-tp 8"));
}

TEST_CASE("measurements: layer profiles compose into whole steps", "[models][fit]") {
  MeasurementFilter f;
  f.layers = 2;
  const MeasurementSet set = read_layer_profile(k_data + "/llmservingsim-tp1", f);
  // 14 attention rows, 5 of them continue a chunk (prefix KV 512) and are skipped.
  REQUIRE(set.samples.size() == 9);
  // First row: one decode at 16 KV tokens, 1 token, 1 sequence. Per layer: attention 8.35233
  // + 2 x layernorm 2.416 + qkv 35.8297 + rotary 2.709 + o_proj 25.664 + gate_up 159.488
  // + act 2.67733 + down 85.5257; once: embedding 3.14667 + final norm 2.42167 + lm_head
  // 714.006 + sampler 24.746 (all microseconds).
  const double layer = 8.35233 + 2 * 2.416 + 35.8297 + 2.709 + 25.664 + 159.488 + 2.67733 + 85.5257;
  CHECK(set.samples[0].ms == Approx((2 * layer + 3.14667 + 2.42167 + 714.006 + 24.746) / 1000));
  CHECK(set.samples[0].shape.decode_context_tokens == 16);
  CHECK_THROWS_WITH(read_layer_profile(k_data + "/llmservingsim-tp1", {}),
                    Catch::Contains("give the model's layer count with --layers"));
}

TEST_CASE("calibrate: writes a step model that a scenario loads by path", "[models][fit][cli]") {
  const auto dir = temp_dir();
  const std::string model = (dir / "step_time.yaml").string();  // calibrate's name in --out
  std::ostringstream out, err;
  REQUIRE(run_cli({"calibrate", k_data + "/splitwise_excerpt.csv", "--source-model", "llama2-70b",
                   "--source-hardware", "h100-80gb", "--source-tp", "4", "--out", dir.string()},
                  out, err) == 0);
  CHECK_THAT(out.str(), Catch::Contains("MAPE 5-fold"));
  CHECK_THAT(out.str(), Catch::Contains("worst cross-validated points"));
  const std::string scenario = write_temp(
      "s.yaml",
      "workload: {synthetic: {requests: 20, arrival: {kind: poisson, rate_per_s: 1},\n"
      "  prompt_tokens: {kind: fixed, value: 100}, output_tokens: {kind: fixed, value: 10}}}\n"
      "step_time: " +
          model +
          "\nscheduler: {kind: continuous, max_num_seqs: 4}\n"
          "kv: {policy: paged, capacity_tokens: 10000}\n");
  std::ostringstream o2, e2;
  CHECK(run_cli({"run", scenario, "--out", (dir / "o").string(), "--quiet"}, o2, e2) == 0);
  CHECK(e2.str() == "");
  // A missing step model file is named at its key.
  const std::string bad =
      write_temp("b.yaml", "kv: {policy: paged, capacity_tokens: 100}\nstep_time: nothere.yaml\n");
  CHECK_THROWS_WITH(build_scenario(Document::load_file(bad)),
                    Catch::Contains("step_time = \"nothere.yaml\""));
}

TEST_CASE("vllm jsonl: requests replay relative to the first arrival", "[traces]") {
  const auto rows = read_vllm_jsonl(k_data + "/vllm_requests_excerpt.jsonl");
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].arrival.count_ns() == 0);
  CHECK(rows[0].prompt_tokens == 2358);
  CHECK(rows[0].output_tokens == 531);
  // arrival_time 1777142838.6237123 - 1777142838.338653, rounded to the nanosecond at double
  // precision of the epoch seconds.
  CHECK(rows[1].arrival.count_ns() == Approx(285'059'300).margin(1'000));
  const std::string bad =
      write_temp("b.jsonl", "{\"input_toks\": 5, \"output_toks\": 0, \"arrival_time\": 1}\n");
  CHECK_THROWS_WITH(
      read_vllm_jsonl(bad),
      Catch::Contains(
          "b.jsonl:1: field \"output_toks\" = 0: must be an integer from 1 to 1000000000"));
  const std::string bad2 = write_temp(
      "c.jsonl", "{\"input_toks\": 5, \"output_toks\": 2, \"arrival_time\": 1}\n{oops\n");
  CHECK_THROWS_WITH(read_vllm_jsonl(bad2), Catch::Contains("c.jsonl:2: not a JSON object"));
}

TEST_CASE("fit: the roofline form recovers the efficiencies and overhead that made the data",
          "[models][fit]") {
  const std::string base = "kind: roofline\nmodel: llama-3.1-8b\nhardware: h100-sxm\n";
  const auto truth = make_step_time_model(Cfg::root(
      doc_of(base + "bandwidth_efficiency: 0.6\ncompute_efficiency: 0.4\noverhead_ms: 2\n")));
  std::vector<StepSample> samples;
  for (int32_t seqs : {1, 4, 16, 64, 256})
    for (int64_t prefill : {0, 128, 2048}) {
      StepSample s;
      s.shape = shape(seqs, 1000 * (prefill > 0 ? seqs - 1 : seqs), prefill);
      if (s.shape.sequences == 0) continue;
      s.ms = truth->step_ms(s.shape);
      samples.push_back(s);
    }
  const auto fitted = make_roofline_fitter(base)(samples);
  CHECK_THAT(fitted->yaml(), Catch::Contains("bandwidth_efficiency: 0.6\n"));
  CHECK_THAT(fitted->yaml(), Catch::Contains("compute_efficiency: 0.4\n"));
  CHECK_THAT(fitted->yaml(), Catch::Contains("overhead_ms: 2\n"));
  // The YAML it writes loads back as a scenario's step_time and predicts the same.
  const auto reloaded = make_step_time_model(Cfg::root(doc_of(fitted->yaml())));
  CHECK(reloaded->step_ms(samples[3].shape) == Approx(samples[3].ms).epsilon(1e-6));
}

TEST_CASE("vllm jsonl: an arrival too far from the first is an input error (fuzz regression)",
          "[traces]") {
  // Found by fuzz_vllm_jsonl: 1e308 s minus the first arrival overflowed int64 nanoseconds.
  // Now every arrival_time must lie within 9e9 s (epoch seconds do) on its own.
  const std::string bad =
      write_temp("far.jsonl",
                 "{\"input_toks\": 5, \"output_toks\": 2, \"arrival_time\": 1}\n"
                 "{\"input_toks\": 5, \"output_toks\": 2, \"arrival_time\": 1e308}\n");
  CHECK_THROWS_WITH(read_vllm_jsonl(bad),
                    Catch::EndsWith("far.jsonl:2: field \"arrival_time\" = 1e+308: must be a "
                                    "finite number of seconds from 0 to 9000000000"));
  // Also found by the fuzzer: a number beyond a double escaped as a JSON library exception.
  const std::string huge = write_temp(
      "huge.jsonl", "{\"input_toks\": 5, \"output_toks\": 2, \"arrival_time\": 171e308838}\n");
  CHECK_THROWS_WITH(
      read_vllm_jsonl(huge),
      Catch::EndsWith("huge.jsonl:1: not a JSON object servesim can read (a number out of range)"));
}

TEST_CASE("fit: steps shorter than a millisecond keep their fitted base time", "[models][fit]") {
  // 0.3 ms a step plus 0.02 ms a sequence: base and per-sequence time add to 0.32 ms, under
  // 1 ms but above 0, so the "a step must take time" floor (1e-6 ms, for a fit whose base and
  // per-sequence terms are both 0) does not replace the base.
  const auto m = fit_linear(synthetic(0.3, 0.02, 0.00001, 0.001));
  CHECK_THAT(m->yaml(), Catch::Contains("base_ms: 0.3\n"));
  CHECK_THAT(m->yaml(), Catch::Contains("per_seq_ms: 0.02\n"));
  // One sequence of 16 context tokens: 0.3 + 0.02 + 16 x 0.00001 = 0.32016 ms.
  CHECK(m->predict_ms(shape(1, 16, 0)) == Approx(0.32016).epsilon(1e-9));
}

}  // namespace t_models_fit_test
