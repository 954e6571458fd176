// The roofline step model: golden figures worked out by hand on a toy model and chip, one on the
// catalogue, the run's utilisation in the summary, and the errors.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/errors.h"
#include "metrics/metrics.h"
#include "metrics/output.h"
#include "metrics/timeline.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_roofline_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Toy model: 1e9 weights; 2 layers of 10 heads of 100 (hidden 1000), 5 KV heads.
//   KV bytes per token in bf16 = 2 x 2 layers x 5 x 100 x 2 bytes = 4,000
//   attention FLOPs per query-key pair = 4 x 2 layers x 10 heads x 100 = 8,000
const std::string k_toy_model = R"(name: toy
source: written for this test
layers: 2
hidden_size: 1000
attention_heads: 10
kv_heads: 5
intermediate_size: 4000
vocab_size: 1000
parameters: 1000000000
max_context_tokens: 100000
)";

// Toy chip: 1,000 GB/s, 100 TFLOP/s in bf16 (200 in int8), 100 GB/s interconnect, 100 GB.
const std::string k_toy_chip = R"(name: chip
source: written for this test
memory_gb: 100
memory_bandwidth_gb_per_s: 1000
peak_tflops: {bf16: 100, int8: 200}
interconnect_gb_per_s: 100
memory_gib: 93
tables: none
prices: {on_demand: {usd_per_hour: 1, source: nobody, date: 2026-01}}
)";

std::string toy_section(const std::string& extra = "") {
  static const std::string model = write_temp("toy-model.yaml", k_toy_model);
  static const std::string chip = write_temp("toy-chip.yaml", k_toy_chip);
  return "{kind: roofline, model: " + model + ", hardware: " + chip + extra + "}";
}

std::unique_ptr<StepTimeModel> model(const std::string& yaml) {
  return make_step_time_model(Cfg::root(doc_of(yaml)));
}

StepShape decode(int seqs, int64_t context) {
  StepShape s;
  s.sequences = s.decode_sequences = seqs;
  s.decode_context_tokens = context;
  return s;
}

StepShape prefill(int64_t chunk) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = chunk;
  s.prefill_tokens_sq = static_cast<double>(chunk * chunk);
  return s;
}

std::string error_of(const std::string& yaml) {
  try {
    (void)model(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("roofline: a decode step is bound by its bytes", "[models][roofline]") {
  auto m = model(toy_section());
  // 4 sequences each reading 100 tokens of KV (99 stored + the one computed):
  //   bytes = 2e9 weights + 400 x 4,000 read + 4 x 4,000 written = 2,001,616,000
  //   flops = 2 x 1e9 x 4 tokens + 8,000 x 400 pairs = 8,003,200,000
  //   memory  = 2,001,616,000 / (1e12 x 0.8) = 2.50202 ms
  //   compute = 8,003,200,000 / (1e14 x 0.6) = 0.1333867 ms
  const StepShape s = decode(4, 400);
  CHECK(m->step_ms(s) == Approx(2.50202).epsilon(1e-12));
  const auto c = m->cost(s);
  REQUIRE(c.has_value());
  CHECK(c->bytes == 2001616000.0);
  CHECK(c->flops == 8003200000.0);
  CHECK(c->bandwidth_bound);
  CHECK(c->ideal_ms_bandwidth == Approx(2.001616).epsilon(1e-12));
  CHECK(c->ideal_ms_compute == Approx(0.080032).epsilon(1e-12));
  CHECK(c->peak_bytes_per_s == 1e12);
  CHECK(c->peak_flops_per_s == 1e14);
  CHECK(c->step_ms == m->step_ms(s));  // the engine takes the step time from cost() alone
}

TEST_CASE("roofline: a long prefill chunk is bound by its arithmetic", "[models][roofline]") {
  auto m = model(toy_section());
  // One chunk of 1,000 tokens attends 1,000^2 / 2 = 500,000 pairs:
  //   bytes = 2e9 + 1,000 x 4,000 written = 2,004,000,000 -> 2.505 ms
  //   flops = 2e9 x 1,000 + 8,000 x 500,000 = 2,004,000,000,000 -> / 6e13 = 33.4 ms
  const StepShape s = prefill(1000);
  CHECK(m->step_ms(s) == Approx(33.4).epsilon(1e-12));
  CHECK_FALSE(m->cost(s)->bandwidth_bound);
  CHECK(m->cost(s)->flops == 2004000000000.0);
  // A chunk continuing a prompt whose first 500 tokens are stored also reads their KV:
  //   bytes = 2e9 + (500 + 1,000) x 4,000 = 2,006,000,000; the FLOPs are unchanged.
  StepShape more = s;
  more.prefill_context_tokens = 500;
  CHECK(m->cost(more)->bytes == 2006000000.0);
  CHECK(m->cost(more)->flops == 2004000000000.0);
}

TEST_CASE("roofline: tensor parallelism splits bytes and flops and adds all-reduces",
          "[models][roofline]") {
  auto m = model(toy_section(", tensor_parallel: 2, overhead_ms: 0.5"));
  // Per accelerator: bytes = 2,001,616,000 / 2 -> 1.25101 ms at 0.8 x 1,000 GB/s.
  // All-reduces: 2 per layer x 2 layers, each 2 (2-1)/2 x (4 tokens x 1,000 x 2 bytes) = 8,000
  // bytes over 100 GB/s: 4 x 8,000 / 1e11 s = 0.00032 ms. Plus 0.5 ms of overhead.
  const StepShape s = decode(4, 400);
  CHECK(m->step_ms(s) == Approx(1.25101 + 0.00032 + 0.5).epsilon(1e-12));
  CHECK(m->cost(s)->bytes == 1000808000.0);
  CHECK(m->cost(s)->flops == 4001600000.0);
}

TEST_CASE("roofline: dtypes set the bytes and the peak", "[models][roofline]") {
  // int8 weights and (by default) int8 KV and int8 arithmetic:
  //   bytes = 1e9 + 400 x 2,000 + 4 x 2,000 = 1,000,808,000 -> / 8e11 = 1.25101 ms
  auto m = model(toy_section(", weight_dtype: int8"));
  CHECK(m->step_ms(decode(4, 400)) == Approx(1.25101).epsilon(1e-12));
  CHECK(m->cost(decode(4, 400))->peak_flops_per_s == 2e14);
  // bf16 KV beside int8 weights, at the full bandwidth: 1e9 + 404 x 4,000 = 1,001,616,000 bytes
  // -> 1.001616 ms
  auto k = model(toy_section(", weight_dtype: int8, kv_dtype: bf16, bandwidth_efficiency: 1"));
  CHECK(k->step_ms(decode(4, 400)) == Approx(1.001616).epsilon(1e-12));
}

TEST_CASE("roofline: a mixture of experts reads only its active weights", "[models][roofline]") {
  // Twice the toy's weights in all, the toy's count active: the same step as the dense toy.
  const std::string moe = write_temp(
      "moe.yaml", k_toy_model.substr(0, k_toy_model.find("parameters:")) +
                      "parameters: 2000000000\nactive_parameters: 1000000000\nexperts: 8\n"
                      "experts_per_token: 2\nmax_context_tokens: 100000\n");
  const std::string chip = write_temp("chip.yaml", k_toy_chip);
  auto m = model("{kind: roofline, model: " + moe + ", hardware: " + chip + "}");
  CHECK(m->step_ms(decode(4, 400)) == Approx(2.50202).epsilon(1e-12));
}

TEST_CASE("roofline: Llama 3.1 8B on an H100 SXM from the catalogue", "[models][roofline]") {
  auto m = model("{kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}");
  // Batch 1, 1,000 tokens of context (999 stored + 1):
  //   bytes = 8,030,261,248 x 2 + 1,000 x 131,072 + 1 x 131,072 = 16,191,725,568
  //   -> / (3.35e12 x 0.8) = 6.0416886 ms
  //   flops = 2 x 8,030,261,248 + 4 x 32 x 32 x 128 x 1,000 = 16,584,810,496
  //   -> / (989.4e12 x 0.6) = 0.0279375 ms
  CHECK(m->step_ms(decode(1, 1000)) == Approx(6.0416886).epsilon(1e-7));
  CHECK(m->cost(decode(1, 1000))->bytes == 16191725568.0);
  CHECK(m->cost(decode(1, 1000))->flops == 16584810496.0);
  // Other models give no cost.
  CHECK_FALSE(model("{kind: linear, base_ms: 1}")->cost(decode(1, 1)).has_value());
}

TEST_CASE("roofline: the summary reports bandwidth and compute utilisation", "[models][roofline]") {
  // One request, 10 prompt tokens and 2 output tokens: a prefill step, then one decode step.
  //   prefill: bytes 2e9 + 10 x 4,000 = 2,000,040,000 -> 2,500,050 ns (bandwidth-bound)
  //            flops 2e9 x 10 + 8,000 x 100 / 2 = 20,000,400,000
  //   decode:  bytes 2e9 + (11 + 1) x 4,000 = 2,000,048,000 -> 2,500,060 ns
  //            flops 2e9 + 8,000 x 11 = 2,000,088,000
  //   mbu = 4,000,088,000 bytes / (5,000,110 ns x 1e12 B/s) = 0.8 (both steps at 0.8 of peak)
  //   mfu = 22,000,488,000 / (5,000,110 ns x 1e14) = 0.044000008
  const std::string yaml =
      trace_scenario("0,10,2\n", toy_section(), "{kind: continuous, max_num_seqs: 4}",
                     "{policy: paged, capacity_tokens: 1000}");
  Scenario sc = build_scenario(doc_of(yaml));
  Simulation sim(std::move(sc.components));
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  CHECK(sim.stats().busy_ns == 2500050 + 2500060);
  const Summary s = summarize(rec.requests, sim.stats());
  REQUIRE(s.mbu.has_value());
  CHECK(*s.mbu == Approx(0.8).epsilon(1e-12));
  CHECK(*s.mfu == Approx(0.044000008).epsilon(1e-7));
  CHECK(*s.bandwidth_bound_step_share == 1.0);
  CHECK(summary_json(s, YAML::Node(), 1)["mbu"].get<double>() == Approx(0.8));
  CHECK_THAT(summary_table(s), Catch::Contains("MBU 80.0%, MFU 4.4%"));
  // A model without a cost leaves them null.
  const Summary t = run_scenario(doc_of(trace_scenario("0,10,2\n", "{kind: linear, base_ms: 1}",
                                                       "{kind: continuous, max_num_seqs: 4}",
                                                       "{policy: paged, capacity_tokens: 1000}")))
                        .summary;
  CHECK_FALSE(t.mbu.has_value());
  CHECK(summary_json(t, YAML::Node(), 1)["mfu"].is_null());
}

TEST_CASE("roofline: the timeline labels each step by the roof that bounds it",
          "[models][roofline]") {
  // One request of 200 prompt tokens and 2 output tokens on the toy chip:
  //   prefill: bytes 2e9 + 200 x 4,000 -> 2.501 ms at 0.8 TB/s; flops 2e9 x 200 + 8,000 x 200^2 / 2
  //            = 400,160,000,000 -> 6.669 ms at 60 TFLOP/s: compute-bound
  //   decode:  bytes 2e9 + 202 x 4,000 -> 2.501 ms; flops 2e9 + 8,000 x 201 -> 0.033 ms: bandwidth
  const std::string yaml =
      trace_scenario("0,200,2\n", toy_section(), "{kind: continuous, max_num_seqs: 4}",
                     "{policy: paged, capacity_tokens: 1000}");
  std::ostringstream text;
  TimelineWriter w(text, 10);
  RunOptions o;
  o.step_observers.push_back(&w);
  o.request_recorders.push_back(&w);
  (void)run_scenario(doc_of(yaml), o);
  w.finish();
  const nlohmann::json timeline = nlohmann::json::parse(text.str());
  std::vector<std::string> bound;
  for (const nlohmann::json& e : timeline["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 1) bound.push_back(e["args"]["bound"].get<std::string>());
  CHECK(bound == std::vector<std::string>{"compute", "bandwidth"});
}

TEST_CASE("roofline: bad settings name the key and what is allowed", "[models][roofline]") {
  CHECK_THAT(error_of("{kind: roofline, model: llama-3.1-8, hardware: h100-sxm}"),
             Catch::Contains("model = \"llama-3.1-8\" at test.yaml:1:25: unknown model "
                             "\"llama-3.1-8\" (did you mean llama-3.1-8b?)"));
  CHECK_THAT(
      error_of("{kind: roofline, model: llama-3.1-8b, hardware: a100-80gb, weight_dtype: fp8}"),
      Catch::Contains("hardware = \"a100-80gb\" at test.yaml:1:49: a100-80gb has no fp8 peak "
                      "(it has fp32, bf16, fp16, int8, int4); set compute_dtype"));
  CHECK(error_of("{kind: roofline, model: llama-3.1-8b, hardware: a100-80gb, weight_dtype: fp8, "
                 "compute_dtype: bf16}") == "no error");
  CHECK_THAT(error_of("{kind: roofline, model: llama-3.1-70b, hardware: h100-sxm}"),
             Catch::Contains("llama-3.1-70b in bf16 takes 141.1 GB of weights per accelerator at "
                             "tensor_parallel 1, more than h100-sxm's 80 GB"));
  CHECK(
      error_of("{kind: roofline, model: llama-3.1-70b, hardware: h100-sxm, tensor_parallel: 2}") ==
      "no error");
  CHECK_THAT(error_of(toy_section(", bandwidth_efficiency: 1.5")),
             Catch::Contains("bandwidth_efficiency = \"1.5\""));
  CHECK_THAT(error_of(toy_section(", weight_dtype: fp4")),
             Catch::Contains("unknown \"fp4\" (did you mean fp8?) (valid: fp32, bf16, fp16, "
                             "fp8, int8, int4)"));
}

TEST_CASE("step-time contract: every model gives a positive, repeatable time, a cost bounds it",
          "[models][contract]") {
  const std::map<std::string, std::string> sections{
      {"layer_profile",
       "{kind: layer_profile, layers: 32, path: " + std::string(SERVESIM_SOURCE_DIR) +
           "/configs/profiles/rtxpro6000-llama-3.1-8b-bf16-tp1}"},
      {"linear", "{kind: linear, base_ms: 1, per_context_token_ms: 0.001}"},
      {"operator", "{kind: operator, model: " + std::string(SERVESIM_SOURCE_DIR) +
                       "/tests/data/aic-tiny/tiny-moe.yaml, hardware: h100-sxm, operators: "
                       "{source: tables, path: " +
                       std::string(SERVESIM_SOURCE_DIR) +
                       "/tests/data/aic-tiny, gpu: tiny_gpu, engine: vllm}}"},
      {"roofline",
       "{kind: roofline, model: qwen3-30b-a3b, hardware: h100-sxm, tensor_parallel: 2}"},
      {"table", "{kind: table, points: [{batch: 1, ms: 6.3}, {batch: 8, ms: 9.3}]}"},
  };
  std::vector<StepShape> shapes{decode(1, 1), decode(8, 8000), prefill(2048)};
  shapes.push_back(prefill(300));
  shapes.back().sequences = 5;
  shapes.back().decode_sequences = 4;
  shapes.back().decode_context_tokens = 4000;
  for (const std::string& name : step_time_model_names()) {
    INFO(name);
    REQUIRE(sections.count(name));  // a new model needs a section here
    const auto m = model(sections.at(name));
    for (const StepShape& s : shapes) {
      const double ms = m->step_ms(s);
      CHECK(ms > 0);
      CHECK(m->step_ms(s) == ms);
      if (const auto c = m->cost(s)) {
        // Efficiencies are at most 1, so the step is never shorter than either ideal.
        CHECK(ms >= std::max(c->ideal_ms_bandwidth, c->ideal_ms_compute));
        CHECK(c->step_ms == ms);
        if (name == "roofline")  // its default efficiencies
          CHECK(c->bandwidth_bound == (c->ideal_ms_bandwidth / 0.8 >= c->ideal_ms_compute / 0.6));
      }
    }
  }
}

}  // namespace t_models_roofline_test
