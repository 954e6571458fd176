// Pipeline parallelism (models/pipeline.h): a two-stage pipeline's step time and bubble worked
// by hand on a toy step model, the layer split, the operator model's per-layer split against
// the unsplit model, P = 1 unchanged, the KV capacity per stage, and the errors.
#include "models/pipeline.h"

#include <array>
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "models/kv_memory.h"
#include "tests/support.h"

namespace t_models_pipeline_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// step_ms = base + per_seq x sequences.
class Toy final : public StepTimeModel {
 public:
  Toy(double base, double per_seq) : m_base(base), m_per_seq(per_seq) {}
  double step_ms(const StepShape& s) const override {
    return m_base + m_per_seq * static_cast<double>(s.sequences);
  }

 private:
  double m_base, m_per_seq;
};

StepShape decodes(int32_t n) {
  StepShape s;
  s.sequences = n;
  s.decode_sequences = n;
  s.decode_context_tokens = 100 * n;
  return s;
}

// 2 stages of 4 layers, hidden 1000 in bf16, a 1 GB/s link (10^6 bytes a ms) with 10 us latency.
PipelineSpec two_stages(int64_t layers = 4) {
  PipelineSpec p;
  p.stages = 2;
  p.layers = layers;
  p.hidden_size = 1000;
  p.activation_bytes = 2;
  p.link_bytes_per_ms = 1e6;
  p.link_latency_ms = 0.01;
  return p;
}

}  // namespace

TEST_CASE("pipeline: two-stage step time and bubble worked by hand", "[models][pipeline]") {
  // The whole model takes 1 + 0.1 x sequences ms; each of 4 layers a quarter of it.
  LayerSplit split;
  split.a = std::make_unique<Toy>(1.0, 0.1);
  split.a1 = 0.25;
  const PipelineModel pp(std::move(split), two_stages());

  // 4 decodes: m = 2 micro-batches of 2. One micro-batch's model time 1.2 ms, a layer 0.3 ms.
  // Send: 0.01 + 2 tokens x 1000 x 2 bytes / 10^6 = 0.014 ms.
  // Stage 0: 2 x 0.3 + 0.014 = 0.614; stage 1: 0.6. Sum 1.214; cycle max(1.214, 2 x 0.614)
  // = 1.228 ms. Bubble = 1 - 2 x 1.214 / (2 x 1.228) = 0.0114 (the unbalanced send).
  const PipelineBreakdown full = pp.breakdown(decodes(4));
  CHECK(full.micro_batches == 2);
  CHECK(full.transfer_ms == Approx(0.014));
  CHECK(full.stage_max_ms == Approx(0.614));
  CHECK(full.stages_sum_ms == Approx(1.214));
  CHECK(full.cycle_ms == Approx(1.228));
  CHECK(full.bubble == Approx(1 - 1.214 / 1.228));
  CHECK(pp.step_ms(decodes(4)) == Approx(1.228));

  // 1 decode: m = 1, half the stages idle. Model 1.1 ms, a layer 0.275; send 0.012 ms.
  // Stage 0: 0.562, stage 1: 0.55; cycle = the sum, 1.112 ms; bubble = 1 - 1.112 / 2.224 = 0.5.
  const PipelineBreakdown one = pp.breakdown(decodes(1));
  CHECK(one.micro_batches == 1);
  CHECK(one.cycle_ms == Approx(1.112));
  CHECK(one.bubble == Approx(0.5));
}

TEST_CASE("pipeline: each stage's busy time, closed form and micro-batches, by hand",
          "[models][pipeline]") {
  const auto make = [](bool micro) {
    LayerSplit split;
    split.a = std::make_unique<Toy>(1.0, 0.1);
    split.a1 = 0.25;
    PipelineSpec spec = two_stages();
    spec.micro_batches = micro;
    return PipelineModel(std::move(split), spec);
  };
  std::array<double, 2> out{};
  // Closed form, 4 decodes: 2 micro-batches of stage 0 0.614 ms and stage 1 0.600 (the table
  // above), so each stage is busy twice that in the step.
  const PipelineModel closed = make(false);
  CHECK(closed.pipeline().stages == 2);
  CHECK_FALSE(closed.pipeline().micro_batches);
  CHECK(closed.pipeline_stage_ms(decodes(4), out) == 2);
  CHECK(out[0] == Approx(1.228));
  CHECK(out[1] == Approx(1.2));
  // Micro-batches: the engine's batch of 4 is one micro-batch: 1.4 ms, 0.35 a layer; the send
  // 0.01 + 4 x 1000 x 2 / 10^6 = 0.018.
  const PipelineModel micro = make(true);
  CHECK(micro.pipeline().micro_batches);
  CHECK(micro.pipeline_stage_ms(decodes(4), out) == 1);
  CHECK(out[0] == Approx(0.718));
  CHECK(out[1] == Approx(0.7));
  CHECK(micro.step_ms(decodes(4)) == closed.step_ms(decodes(4)));  // step_ms stays the closed form
}

TEST_CASE("pipeline: the LM head runs on the last stage and leftover layers before it",
          "[models][pipeline]") {
  CHECK(pipeline_stage_layers(80, 3) == std::vector<int64_t>{27, 27, 26});
  CHECK(pipeline_stage_layers(7, 4) == std::vector<int64_t>{2, 2, 2, 1});
  CHECK(pipeline_stage_layers(3, 2) == std::vector<int64_t>{2, 1});
  CHECK(pipeline_stage_layers(5, 1) == std::vector<int64_t>{5});

  // As the operator model is split: A = 1 layer + once-per-step = 0.2 + 0.5, B = 2 layers + once
  // = 0.4 + 0.5 (per sequence terms 0). 3 layers on 2 stages: [2, 1].
  LayerSplit split;
  split.a = std::make_unique<Toy>(0.7, 0.0);
  split.b = std::make_unique<Toy>(0.9, 0.0);
  split.a1 = -1;
  split.a2 = 1;
  split.o1 = 2;
  split.o2 = -1;
  const PipelineModel pp(std::move(split), two_stages(3));
  // 2 decodes, m = 2 of 1. Stage 0: 2 x 0.2 + (0.01 + 1 x 2000 / 10^6) = 0.412; stage 1:
  // 0.2 + 0.5 = 0.7 (the slowest). Cycle max(1.112, 2 x 0.7) = 1.4 ms.
  const PipelineBreakdown b = pp.breakdown(decodes(2));
  CHECK(b.stage_max_ms == Approx(0.7));
  CHECK(b.cycle_ms == Approx(1.4));
  CHECK(b.bubble == Approx(1 - 1.112 / 1.4));
}

TEST_CASE("pipeline: micro-batches share the step's work, counts rounded up",
          "[models][pipeline]") {
  StepShape s = decodes(5);
  s.prefill_tokens = 101;
  s.sequences = 6;
  s.prefill_tokens_sq = 101.0 * 101.0;
  const StepShape b = PipelineModel::micro_batch(s, 2);
  CHECK(b.sequences == 3);
  CHECK(b.decode_sequences == 3);
  CHECK(b.prefill_tokens == 51);
  CHECK(b.decode_context_tokens == 250);
  CHECK(b.prefill_tokens_sq == Approx(101.0 * 101.0 / 2));
}

namespace {
const std::string k_operator =
    "kind: operator, model: llama-3.1-70b, hardware: h100-sxm, tensor_parallel: 4, "
    "operators: {source: roofline}";

std::unique_ptr<StepTimeModel> model_of(const std::string& flow) {
  return make_step_time_model(Cfg::root(doc_of(flow)));
}
}  // namespace

TEST_CASE("pipeline: the operator model's per-layer split adds back up to the whole model",
          "[models][pipeline]") {
  const auto whole = model_of("{" + k_operator + "}");
  const auto piped = model_of("{" + k_operator + ", pipeline_parallel: 2}");
  // One sequence: one micro-batch through both stages, so the step is the whole model plus one
  // send of 8192 x 2 bytes at 450 GB/s (one way of 900) and 10 us.
  const double send_ms = 0.01 + 8192.0 * 2 / 450e6;
  CHECK(piped->step_ms(decodes(1)) == Approx(whole->step_ms(decodes(1)) + send_ms).epsilon(0.01));
  // Many sequences: two micro-batches in flight, each stage half the layers; faster per step
  // than the whole model at half the batch twice over.
  CHECK(piped->step_ms(decodes(64)) < 2 * whole->step_ms(decodes(32)));
}

TEST_CASE("pipeline: the roofline model splits evenly over its layers", "[models][pipeline]") {
  const std::string rf =
      "kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, pipeline_link_latency_us: 0";
  const auto whole = model_of("{" + rf + "}");
  const auto piped = model_of("{" + rf + ", pipeline_parallel: 2, pipeline_link_gb_per_s: 1000}");
  // 2 decodes over 2 stages of 16 layers: 2 micro-batches of 1, each stage half of the whole
  // model's time at one sequence plus (stage 0) a send of 4096 x 2 bytes at 10^9 bytes a ms.
  const double half = whole->step_ms(decodes(1)) / 2;
  const double send = 4096.0 * 2 / 1e9;
  CHECK(piped->step_ms(decodes(2)) == Approx(2 * (half + send)));
}

TEST_CASE("pipeline: pipeline_parallel 1 leaves the model as it was", "[models][pipeline]") {
  const auto whole = model_of("{" + k_operator + "}");
  const auto one = model_of("{" + k_operator + ", pipeline_parallel: 1}");
  for (int32_t n : {1, 7, 64, 300}) CHECK(one->step_ms(decodes(n)) == whole->step_ms(decodes(n)));
}

TEST_CASE("pipeline: each stage holds its share of the weights and of the KV",
          "[models][pipeline]") {
  // 4e9 fp16 parameters (8e9 bytes), 4 layers, 1 KV head of 128, 10 GiB, utilization 1.
  //   P = 1: (10 x 2^30 - 8e9) / (2 x 4 x 128 x 2 = 2048) = 1,336,630 tokens
  //   P = 2: (10 x 2^30 - 4e9) / (2 x 2 x 128 x 2 = 1024) = 6,579,510 tokens
  const std::string base =
      "{kv: {memory: {accelerator_gib: 10, utilization: 1, parameters: 4.0e9, weight_dtype: fp16, "
      "layers: 4, kv_heads: 1, head_dim: 128, kv_dtype: fp16";
  const auto capacity = [&](const std::string& extra) {
    return read_kv_memory(Cfg::root(doc_of(base + extra + "}}}")).child("kv").child("memory"))
        .capacity_tokens;
  };
  CHECK(capacity("") == 1336630);
  CHECK(capacity(", pipeline_parallel: 2") == 6579510);
  CHECK_THROWS_WITH(capacity(", pipeline_parallel: 5"), Catch::Contains("more stages"));
}

TEST_CASE("pipeline: bad settings are refused with the key", "[models][pipeline]") {
  CHECK_THROWS_WITH(
      model_of("{kind: linear, base_ms: 1, "
               "pipeline_parallel: 2}"),
      Catch::Contains("pipeline_parallel") && Catch::Contains("operator or roofline"));
  CHECK_THROWS_WITH(model_of("{" + k_operator + ", pipeline_link_gb_per_s: 5e10}"),
                    Catch::Contains("pipeline_link_gb_per_s") && Catch::Contains("GB/s"));
  CHECK_THROWS_WITH(model_of("{" + k_operator + ", pipeline_parallel: 81}"),
                    Catch::Contains("more stages than"));
  CHECK_THROWS_WITH(model_of("{" + k_operator + ", pipeline_parallel: 0}"),
                    Catch::Contains("pipeline_parallel"));
  CHECK_THROWS_WITH(model_of("{" + k_operator + ", pipeline_schedule: eager}"),
                    Catch::Contains("pipeline_schedule") && Catch::Contains("micro_batches"));
  CHECK(model_of("{" + k_operator + ", pipeline_parallel: 2, pipeline_schedule: micro_batches}")
            ->pipeline()
            .micro_batches);
}

}  // namespace t_models_pipeline_test
