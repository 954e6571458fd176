// Step-model code that only a rare configuration reaches, found by the line coverage of the suite
// (scripts/coverage.sh, issue 35's sixth round): the engine CPU time of the cpu_overhead and
// host-time wrappers under engine-scheduled pipeline micro-batches, a fitted roofline's own
// prediction, and the weights-too-large refusal's parallelism wording.
#include <array>
#include <catch2/catch.hpp>
#include <fstream>
#include <span>
#include <string>

#include "core/errors.h"
#include "models/catalog.h"
#include "models/fit.h"
#include "models/host_time.h"
#include "models/mla.h"
#include "models/operator_source.h"
#include "models/step_time_model.h"
#include "tests/models/operator_stubs.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_rare_paths_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Three pipeline stages, busy 0.3, 0.5 and 0.7 ms for any shape, returning `m`; the slot past
/// the last stage is left alone (a wrapper must not read or write it).
class ThreeStages final : public StepTimeModel {
 public:
  explicit ThreeStages(bool micro) : m_micro(micro) {}
  double step_ms(const StepShape&) const override { return 2.0; }
  PipelineInfo pipeline() const override { return {3, m_micro}; }
  int32_t pipeline_stage_ms(const StepShape&, std::span<double> out) const override {
    out[0] = 0.3;
    out[1] = 0.5;
    out[2] = 0.7;
    return m_micro ? 1 : 4;
  }

 private:
  bool m_micro;
};

StepShape decode(int32_t n) {
  StepShape s;
  s.sequences = s.decode_sequences = n;
  s.decode_context_tokens = 100 * n;
  return s;
}

/// The stage times `m` gives, with a poisoned fourth slot.
std::array<double, 4> stages(const StepTimeModel& m, const StepShape& s, int32_t expect_return) {
  std::array<double, 4> out{-1, -1, -1, 100.0};
  CHECK(m.pipeline_stage_ms(s, out) == expect_return);
  CHECK(out[3] == 100.0);
  return out;
}

}  // namespace

TEST_CASE("cpu_overhead: with engine-scheduled micro-batches the CPU time goes on stage 0 only",
          "[models][pipeline]") {
  // 0.25 + 0.05 x 4 seats = 0.45 ms on stage 0; the other stages as the inner model says.
  const auto micro = with_cpu_overhead(std::make_unique<ThreeStages>(true), {0.25, 0.05});
  CHECK(micro->pipeline().stages == 3);
  CHECK(micro->pipeline().micro_batches);
  auto out = stages(*micro, decode(4), 1);
  CHECK(out[0] == Approx(0.3 + 0.45));
  CHECK(out[1] == 0.5);
  CHECK(out[2] == 0.7);
  // The closed form: the stage times are the inner model's (its step_ms has the CPU time).
  const auto closed = with_cpu_overhead(std::make_unique<ThreeStages>(false), {0.25, 0.05});
  CHECK_FALSE(closed->pipeline().micro_batches);
  out = stages(*closed, decode(4), 4);
  CHECK(out[0] == 0.3);
  CHECK(out[1] == 0.5);
  CHECK(out[2] == 0.7);
  CHECK(closed->step_ms(decode(4)) == Approx(2.45));
}

TEST_CASE("host_time: with engine-scheduled micro-batches the exposed host time goes on stage 0",
          "[models][pipeline][host_time]") {
  // The stages' sum is 1.5 ms of GPU time. Serial host: 0.5 + 0.4 + 0.2 = 1.1 at 4 seats, all
  // exposed, so stage 0 grows by 1.1.
  const auto serial = with_host_time(std::make_unique<ThreeStages>(true), two_part_host(false),
                                     CudaGraphs{}, false);
  CHECK(serial->pipeline().stages == 3);
  auto out = stages(*serial, decode(4), 1);
  CHECK(out[0] == Approx(0.3 + 1.1));
  CHECK(out[1] == 0.5);
  CHECK(out[2] == 0.7);
  // Overlapped: the hidden 0.9 fits under the 1.5 of the stages, only the 0.2 is exposed.
  const auto overlapped =
      with_host_time(std::make_unique<ThreeStages>(true), two_part_host(true), CudaGraphs{}, false);
  out = stages(*overlapped, decode(4), 1);
  CHECK(out[0] == Approx(0.3 + 0.2));
  CHECK(out[1] == 0.5);
  CHECK(out[2] == 0.7);
  // 20 seats: hidden 0.5 + 2 = 2.5 > 1.5, so the CPU sets the pace: 2.5 + 0.2 - 1.5 = 1.2 more.
  out = stages(*overlapped, decode(20), 1);
  CHECK(out[0] == Approx(0.3 + 1.2));
  CHECK(out[2] == 0.7);
  // The closed form leaves the stages alone.
  const auto closed = with_host_time(std::make_unique<ThreeStages>(false), two_part_host(false),
                                     CudaGraphs{}, false);
  out = stages(*closed, decode(4), 4);
  CHECK(out[0] == 0.3);
  CHECK(out[1] == 0.5);
  CHECK(out[2] == 0.7);
}

TEST_CASE("fit: a fitted roofline predicts the step model it was fitted from, on new shapes",
          "[models][fit]") {
  // Two GPUs, so the steps have all-reduce time, which the fit keeps as it is.
  const std::string base =
      "kind: roofline\nmodel: llama-3.1-8b\nhardware: h100-sxm\ntensor_parallel: 2\n";
  const auto truth = make_step_time_model(Cfg::root(
      doc_of(base + "bandwidth_efficiency: 0.7\ncompute_efficiency: 0.35\noverhead_ms: 1.5\n")));
  std::vector<StepSample> samples;
  for (int32_t seqs : {1, 8, 64})
    for (int64_t prefill : {0, 512, 4096}) {
      StepSample s;
      s.shape = decode(seqs);
      s.shape.prefill_tokens = prefill;
      s.ms = truth->step_ms(s.shape);
      samples.push_back(s);
    }
  const auto fitted = make_roofline_fitter(base)(samples);
  CHECK(fitted->kind() == "roofline");
  // Shapes it was not fitted on, memory-bound (decodes) and compute-bound (a long prefill).
  for (int32_t seqs : {2, 32, 200})
    CHECK(fitted->predict_ms(decode(seqs)) == Approx(truth->step_ms(decode(seqs))).epsilon(1e-9));
  StepShape chunk = decode(3);
  chunk.prefill_tokens = 8192;
  CHECK(fitted->predict_ms(chunk) == Approx(truth->step_ms(chunk)).epsilon(1e-9));
  CHECK(fitted->predict_ms(chunk) > fitted->predict_ms(decode(3)) + 1.0);
}

TEST_CASE("operator: the weights-too-large refusal names the parallelism that splits them",
          "[models][operator]") {
  const auto error_of = [](const std::string& model, const std::string& extra) {
    try {
      (void)make_step_time_model(
          Cfg::root(doc_of("kind: operator\nmodel: " + model +
                           "\nhardware: h100-sxm\noperators: {source: roofline}\n" + extra)));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // llama-3.1-70b in bf16: 141.1 GB (as the roofline counts it), more than 80 on one GPU, half
  // of it on each of 2 stages.
  CHECK_THAT(error_of("llama-3.1-70b", ""),
             Catch::Contains("llama-3.1-70b takes 141.1 GB of weights per accelerator at "
                             "tensor_parallel 1, more than h100-sxm's 80 GB"));
  CHECK(error_of("llama-3.1-70b", "pipeline_parallel: 2\n") == "(no error)");
  // llama-3.1-405b: about 811 GB; over 4 GPUs and 2 stages, still more than 80 each.
  CHECK_THAT(error_of("llama-3.1-405b", "tensor_parallel: 4\npipeline_parallel: 2\n"),
             Catch::Contains("per accelerator at tensor_parallel 4 x pipeline_parallel 2, more "
                             "than h100-sxm's 80 GB"));
  CHECK_THAT(error_of("llama-3.1-405b", "tensor_parallel: 8\n"),
             Catch::Contains("per accelerator at tensor_parallel 8, more than"));
  // A mixture of experts too large for its data-parallel group.
  const std::string tiny = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny/tiny-moe.yaml";
  std::ifstream in(tiny);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "parameters: 2000000\n";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "parameters: 400000000000\n");
  const std::string huge = write_temp("huge-moe.yaml", text);
  CHECK_THAT(error_of(huge, "data_parallel: 2\n"),
             Catch::Contains("per accelerator at tensor_parallel 1 x data_parallel 2, more than"));
  CHECK_THAT(error_of(huge, ""),
             Catch::Contains("per accelerator at tensor_parallel 1, more than"));
}

namespace {

/// Times a GEMM as 2 m n k x 10^-12 ms (so a sum of GEMMs gives back their weights); the rest 1.
struct GemmFlops final : UnitOperatorSource {
  std::string describe() const override { return "gemm flops"; }
  double gemm_ms(double m, double n, double k, const std::string&) const override {
    return 2 * m * n * k * 1e-12;
  }
};

}  // namespace

TEST_CASE("mla: a query LoRA rank of 1 still goes through q_a, and the rotary elements count",
          "[models]") {
  // DeepSeek-V3's layer over 8 GPUs: 16 query heads of nope 128 + rope 64, values of 128, a
  // 512-wide KV latent, hidden 7168; its q_lora_rank 1536 set to 1 and to 0.
  const ModelSpec m = load_model("deepseek-v3");
  MlaLayer l{m.mla, static_cast<double>(m.hidden_size), static_cast<double>(m.attention_heads) / 8};
  REQUIRE(l.heads == 16);
  // Every token's rotary part: the 16 queries' and the one key's, 64 each.
  CHECK(mla_rotary_elements(l) == 17 * 64);
  const GemmFlops src;
  // Rank 1: q_a 7168 -> 1, q_b 1 -> 16 x 192, kv_a 7168 -> 576, kv_b 512 -> 16 x 256,
  // o 16 x 128 -> 7168.
  l.spec.q_lora_rank = 1;
  const double rank1 =
      7168.0 * 1 + 1.0 * 16 * 192 + 7168.0 * 576 + 512.0 * 16 * 256 + 16.0 * 128 * 7168;
  CHECK(mla_projection_ms(src, l, 10, "bf16") == Approx(2 * 10 * rank1 * 1e-12).epsilon(1e-12));
  // Rank 0: no q_a, and q takes the hidden state: 7168 -> 16 x 192.
  l.spec.q_lora_rank = 0;
  const double rank0 = 7168.0 * 16 * 192 + 7168.0 * 576 + 512.0 * 16 * 256 + 16.0 * 128 * 7168;
  CHECK(mla_projection_ms(src, l, 10, "bf16") == Approx(2 * 10 * rank0 * 1e-12).epsilon(1e-12));
}

TEST_CASE("operator: more GPUs than KV heads keep a copy of one KV head each",
          "[models][operator]") {
  // tiny-dense has 2 KV heads: at tensor_parallel 2 each GPU holds one, at 4 each holds a copy
  // of one (as vLLM replicates them), so a decode reads the same KV bytes a GPU either way and
  // the step grows by the same time when the context does (decode attention is memory-bound).
  const std::string tiny =
      std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny/tiny-dense.yaml";
  const auto growth = [&](int tp) {
    const auto m = make_step_time_model(Cfg::root(
        doc_of("{kind: operator, model: " + tiny + ", hardware: h100-sxm, tensor_parallel: " +
               std::to_string(tp) + ", operators: {source: roofline}}")));
    StepShape s = decode(8);
    s.decode_context_tokens = 8 * 1024;
    const double short_ms = m->step_ms(s);
    s.decode_context_tokens = 8 * 65536;
    return m->step_ms(s) - short_ms;
  };
  CHECK(growth(2) > 0);
  CHECK(growth(4) == Approx(growth(2)).epsilon(1e-6));
  // One GPU holds both KV heads: twice the bytes.
  CHECK(growth(1) == Approx(2 * growth(2)).epsilon(1e-6));
}

TEST_CASE("operator: a dense model takes data_parallel 1 and refuses more", "[models][operator]") {
  const std::string tiny = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";
  const auto make = [&](int dp) {
    return make_step_time_model(
        Cfg::root(doc_of("{kind: operator, model: " + tiny +
                         "/tiny-dense.yaml, hardware: h100-sxm, operators: {source: roofline}, "
                         "data_parallel: " +
                         std::to_string(dp) + "}")));
  };
  CHECK_NOTHROW(make(1));
  CHECK_THROWS_WITH(make(2), Catch::Contains("data_parallel") &&
                                 Catch::Contains("only for a mixture of experts (tiny-dense is "
                                                 "dense)"));
}

}  // namespace t_models_rare_paths_test
