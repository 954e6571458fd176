// Boundaries inside the step models that no figure elsewhere reaches: where the operator model's
// attention tables hand over to the grids they tabulate, the linear fit's rule that a step takes
// time, the roofline fit's weighing of every sample, vLLM's V0/V1 version line, a MoE model's
// weight dtype without an expert variant, a MoE block of no tokens, and how the operator
// tables' readers spell keys and skim rows.
#include <catch2/catch.hpp>

#include "core/config.h"
#include "models/fit.h"
#include "models/layer_profile.h"
#include "models/operator_table_readers.h"
#include "models/pipeline.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_step_boundaries_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_dir = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";

// The operator model on tests/data/aic-tiny's tiny-dense model (tests/models/operator_test.cpp
// works its figures out): context attention 0.256 ms a layer at isl 256, slope 2 beyond.
std::unique_ptr<StepTimeModel> tiny_operator() {
  auto doc =
      doc_of("kind: operator\nmodel: " + k_dir +
             "/tiny-dense.yaml\nhardware: h100-sxm\noperators: {source: tables, path: " + k_dir +
             ", gpu: tiny_gpu, engine: vllm}\n");
  auto m = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return m;
}

// A 16-token chunk after `earlier` stored tokens: the pairs of a fresh prefill of
// L = sqrt(16^2 + 2 x 16 x earlier) tokens.
StepShape chunk_after(int64_t earlier) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = 16;
  s.prefill_tokens_sq = 256;
  s.prefill_context_tokens = earlier;
  return s;
}

StepShape decode_only(int32_t seqs, int64_t ctx = 0) {
  StepShape s;
  s.sequences = s.decode_sequences = seqs;
  s.decode_context_tokens = ctx;
  return s;
}

StepShape fresh_prefill(int64_t tokens) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = tokens;
  s.prefill_tokens_sq = static_cast<double>(tokens) * static_cast<double>(tokens);
  return s;
}

}  // namespace

TEST_CASE("step boundaries: attention lengths below 2^20 come from the table, beyond from the grid",
          "[models][operator]") {
  const auto m = tiny_operator();
  // At T = 16 and one sequence the rest of the step is 0.204 + 0.04 ms (operator_test.cpp).
  // L = 2^19 x 33/32 = 540672 (earlier = (L^2 - 256) / 32): halfway through the table's sub-bin
  // [2^19, 2^19 x 17/16], where it interpolates linearly between 2 x 0.256 x (L / 256)^2 at
  // both ends: (1 + (17/16)^2) / 2 = 545/512 = 1090/1024 of the start, against the grid's
  // log-log (33/32)^2 = 1089/1024. The grid at 540672 is 0.512 x 2112^2 = 2283798.528 ms.
  const double below = 0.512 * 2112.0 * 2112.0;
  CHECK(m->step_ms(chunk_after(int64_t{1089} * (int64_t{1} << 23) - 8)) ==
        Approx(0.244 + below * 1090 / 1089).epsilon(1e-7));
  // L = 2^20 x 33/32 = 1081344: past the table's last octave the grid answers itself, exactly
  // log-log: 0.512 x 4224^2.
  const double beyond = 0.512 * 4224.0 * 4224.0;
  CHECK(m->step_ms(chunk_after(int64_t{1089} * (int64_t{1} << 25) - 8)) ==
        Approx(0.244 + beyond).epsilon(1e-7));
}

TEST_CASE("step boundaries: a linear fit keeps a base smaller than its per-sequence cost",
          "[models][fit]") {
  // Decode-only steps at 1 + 2 x sequences ms: the fit is exact, base 1 and 2 a sequence; only a
  // fit whose base and per-sequence cost sum to <= 0 has its base raised to 1e-6.
  const std::vector<StepSample> s{
      {decode_only(1), 3.0, ""}, {decode_only(2), 5.0, ""}, {decode_only(4), 9.0, ""}};
  const auto m = fit_linear(s);
  CHECK(m->predict_ms(decode_only(1)) == Approx(3.0).epsilon(1e-9));
  CHECK(m->predict_ms(decode_only(8)) == Approx(17.0).epsilon(1e-9));
  CHECK_THAT(m->yaml(), Catch::Contains("base_ms: 1\n") && Catch::Contains("per_seq_ms: 2\n"));
}

TEST_CASE(
    "step boundaries: a linear fit with no base and no per-sequence cost gets a base of 1e-6 ms",
    "[models][fit]") {
  // Decode steps at exactly 0.001 ms a context token: (1 sequence, 1000 tokens) 1 ms, (1, 2000)
  // 2 ms, (2, 4000) and (4, 4000) 4 ms. The fit is exact with the context term alone, so base
  // and per-sequence cost are 0 and the linear model's rule (a step must take time) sets the
  // base to 1e-6 ms: 1.000001 ms for the first shape (seed 38044's fit.cpp:83 wrote 1e-7).
  const std::vector<StepSample> s{{decode_only(1, 1000), 1.0, ""},
                                  {decode_only(1, 2000), 2.0, ""},
                                  {decode_only(2, 4000), 4.0, ""},
                                  {decode_only(4, 4000), 4.0, ""}};
  const auto m = fit_linear(s);
  CHECK(m->predict_ms(decode_only(1, 1000)) == Approx(1.000001).epsilon(1e-10));
  CHECK(m->predict_ms(decode_only(3, 0)) == Approx(1e-6).epsilon(1e-6));
}

TEST_CASE("step boundaries: the roofline fit weighs every sample, whatever their order",
          "[models][fit]") {
  // Steps timed by the roofline at 50% of the bandwidth roof and 60% of the compute roof, no
  // overhead: one compute-bound prefill of 8192 tokens and two memory-bound decodes. Only the
  // prefill tells the compute efficiency (a lower one would also fit the decodes exactly, with
  // the overhead at its floor of 0), so the fit finds 0.6 with the prefill first or last.
  const std::string base = "kind: roofline\nmodel: llama-3.1-8b\nhardware: h100-sxm\n";
  const auto truth = make_step_time_model(Cfg::root(
      doc_of(base + "bandwidth_efficiency: 0.5\ncompute_efficiency: 0.6\noverhead_ms: 0\n")));
  std::vector<StepSample> samples;
  for (const StepShape& s : {fresh_prefill(8192), decode_only(1, 1000), decode_only(8, 8000)})
    samples.push_back({s, truth->step_ms(s), ""});
  for (int order = 0; order < 2; ++order) {
    INFO("prefill " << (order == 0 ? "first" : "last"));
    const auto fitted = make_roofline_fitter(base)(samples);
    CHECK_THAT(fitted->yaml(), Catch::Contains("bandwidth_efficiency: 0.5\n") &&
                                   Catch::Contains("compute_efficiency: 0.6\n") &&
                                   Catch::Contains("overhead_ms: 0\n"));
    std::reverse(samples.begin(), samples.end());
  }
}

TEST_CASE("step boundaries: vLLM 0.8 is V1 (asynchronous scheduling allowed), 0.7 is V0",
          "[models][host_time]") {
  const std::string linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
  const std::string kv = "{policy: paged, capacity_tokens: 1024, block_size: 16}";
  const auto with = [&](const std::string& version) {
    return input_error_of(trace_scenario("0,4,2\n", linear,
                                         "{kind: vllm, enable_prefix_caching: false, version: \"" +
                                             version +
                                             "\", async_scheduling: true, host_time: true, "
                                             "cuda_graphs: {layers: 10}}",
                                         kv));
  };
  CHECK(with("0.8") == "(no error)");
  CHECK(with("0.9") == "(no error)");
  CHECK_THAT(with("0.7"), Catch::Contains("async_scheduling") && Catch::Contains("vLLM 0.7 (V0)"));
}

TEST_CASE("step boundaries: a MoE model in a weight dtype with no expert variant needs moe_dtype",
          "[models][operator]") {
  // int8_wo has GEMM tables but no MoE variant: the experts' dtype must be named.
  const auto yaml = [](const std::string& extra) {
    return "kind: operator\nmodel: " + k_dir +
           "/tiny-moe.yaml\nhardware: h100-sxm\noperators: {source: tables, path: " + k_dir +
           ", gpu: tiny_gpu, engine: vllm}\nweight_dtype: int8_wo\n" + extra;
  };
  CHECK_THROWS_WITH(make_step_time_model(Cfg::root(doc_of(yaml("")))),
                    Catch::Contains("weight_dtype") &&
                        Catch::Contains("int8_wo has no MoE variant: give moe_dtype"));
}

TEST_CASE("step boundaries: a MoE block over no tokens takes no time", "[models][layer_profile]") {
  // tests/data/llmservingsim-moe: the block at 1 token is 50.2297 us (layer_profile_test.cpp).
  const LayerProfile p(std::string(SERVESIM_SOURCE_DIR) + "/tests/data/llmservingsim-moe/tp1", 2);
  REQUIRE(p.is_moe());
  CHECK(p.moe_us(1, p.default_routing()) == Approx(50.2297).epsilon(1e-12));
  CHECK(p.moe_us(0, p.default_routing()) == 0.0);
}

TEST_CASE("step boundaries: a table key spells whole sizes as integers and keeps any other",
          "[models][operator]") {
  // Key columns hold integers ("128"); a size that is not one keeps its fraction, so it can
  // never match a key.
  CHECK(key_num(128) == "128");
  CHECK(key_num(1) == "1");
  CHECK(key_num(999999999999999) == "999999999999999");
  CHECK(key_num(1.5) == "1.5");
  CHECK(key_num(2048.25) == "2048.25");
}

TEST_CASE("step boundaries: an attention file whose layout columns do not lead is read whole",
          "[models][operator]") {
  // batch_size sits between num_heads and num_key_value_heads, so rows cannot be skipped by
  // their first bytes: all three batches of the 4/2 heads x 32 layout are read, not only the
  // rows whose third field happens to equal the KV heads (batch 2).
  const std::string file = write_temp("context_attention.csv",
                                      "head_dim,num_heads,batch_size,num_key_value_heads,isl,step,"
                                      "latency_ms_x\n"
                                      "32,4,1,2,16,0,0.01\n32,4,2,2,16,0,0.02\n"
                                      "32,4,4,2,16,0,0.04\n32,4,2,1,16,0,0.5\n");
  Breakpoints bp;
  const AttentionTable t = read_attention_table(file, false, AttentionHeads{4, 2, 32}, "x", bp);
  REQUIRE(t.by_batch.size() == 1);
  CHECK(t.by_batch[0].at(1) == Approx(0.01).epsilon(1e-12));
  CHECK(t.by_batch[0].at(2) == Approx(0.02).epsilon(1e-12));
  CHECK(t.by_batch[0].at(4) == Approx(0.04).epsilon(1e-12));
}

TEST_CASE("step boundaries: a header's open quote is named at line 1", "[models][operator]") {
  const std::string file = write_temp("context_attention.csv",
                                      "head_dim,num_heads,num_key_value_heads,batch_size,isl,step,"
                                      "\"latency_ms_x\n32,4,2,1,16,0,0.01\n");
  Breakpoints bp;
  CHECK_THROWS_WITH(read_attention_table(file, false, AttentionHeads{4, 2, 32}, "x", bp),
                    Catch::Contains("context_attention.csv:1:"));
}

TEST_CASE("step boundaries: a pipeline's breakdown of an empty step is one micro-batch",
          "[models][pipeline]") {
  // A step model of 1 ms whatever the shape, 4 layers in 2 stages of 2, hidden 1000 in bf16 over
  // a 10^6-bytes-a-ms link with 10 us latency. No sequences: one micro-batch (as step_ms
  // counts), stage 0 2 x 0.25 + 0.01 (the send of 0 tokens) = 0.51 ms, stage 1 0.5 ms: the
  // cycle is their sum, 1.01 ms, and half the stage time is idle.
  struct Flat final : StepTimeModel {
    double step_ms(const StepShape&) const override { return 1.0; }
  };
  LayerSplit split;
  split.a = std::make_unique<Flat>();
  split.a1 = 0.25;
  PipelineSpec spec;
  spec.stages = 2;
  spec.layers = 4;
  spec.hidden_size = 1000;
  spec.activation_bytes = 2;
  spec.link_bytes_per_ms = 1e6;
  spec.link_latency_ms = 0.01;
  const PipelineModel pp(std::move(split), spec);
  const PipelineBreakdown b = pp.breakdown(StepShape{});
  CHECK(b.micro_batches == 1);
  CHECK(b.cycle_ms == Approx(1.01));
  CHECK(b.bubble == Approx(0.5));
  CHECK(pp.step_ms(StepShape{}) == Approx(1.01));
}

}  // namespace t_models_step_boundaries_test
