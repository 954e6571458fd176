// The shape-aware roofline operator source: one hand-worked figure per operator on a toy chip and
// a toy fit file, monotonicity on the committed fits, and the refusals.
#include "models/shape_roofline.h"

#include <catch2/catch.hpp>
#include <functional>

#include "core/errors.h"
#include "tests/support.h"

namespace t_models_shape_roofline_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Toy chip: 1,000 GB/s (1e12 B/s), 100 TFLOP/s bf16, 200 fp8, 200 GB/s interconnect both ways
// (1e11 B/s one way).
const std::string k_chip = R"(name: chip
source: written for this test
memory_gb: 100
memory_gib: 93
tables: none
memory_bandwidth_gb_per_s: 1000
peak_tflops: {bf16: 100, fp8: 200}
interconnect_gb_per_s: 200
prices: {on_demand: {usd_per_hour: 1, source: none, date: 2026-01-01}}
)";

// Every efficiency 0.5, so the effective bandwidth is 5e11 B/s and the bf16 compute 5e13 FLOP/s
// (fp8 1e14) before the saturation terms.
const std::string k_fit = R"(gemm:
  bfloat16: {compute_efficiency: 0.5, m_half_rows: 100, nk_half: 0, bandwidth_efficiency: 0.5, weight_half_bytes: 0, latency_ms: 0.01}
  fp8: {compute_efficiency: 0.5, m_half_rows: 0, nk_half: 0, bandwidth_efficiency: 0.5, weight_half_bytes: 0, latency_ms: 0.01}
context_attention:
  bfloat16_kv_bfloat16: {compute_efficiency: 0.5, isl_half_tokens: 0, work_half: 0, bandwidth_efficiency: 0.5, latency_ms: 0.01}
generation_attention:
  bfloat16_kv_bfloat16: {bandwidth_efficiency: 0.5, sequence_half_bytes: 1000, latency_ms: 0.01, per_sequence_ms: 0.001}
moe:
  bfloat16: {compute_efficiency: 0.5, rows_half: 0, bandwidth_efficiency: 0.5, latency_ms: 0.01, per_expert_ms: 0.001}
allreduce:
  bfloat16: {bandwidth_efficiency: 0.5, half_bytes: 0, latency_ms: 0.01, per_gpu_ms: 0.002}
elementwise: {bandwidth_efficiency: 0.5, latency_ms: 0.001}
)";

std::unique_ptr<OperatorSource> toy(const std::string& fit = k_fit,
                                    const std::string& chip = k_chip) {
  return make_shape_roofline_source_from_text(fit, "fit.yaml", parse_hardware(chip, "chip.yaml"));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const AttentionHeads k_heads{8, 2, 128};

}  // namespace

TEST_CASE("shape roofline: a GEMM is the slower of its FLOPs and bytes plus the latency",
          "[models]") {
  const auto s = toy();
  // m=100, n=k=1000: e_c = 0.5 x 100/(100+100) = 0.25; 2e8 FLOPs / 2.5e13 = 0.008 ms.
  // bytes = 100x1000x2 + 1e6x2 + 2x100x1000 = 2.4e6; / 5e11 = 0.0048 ms. 0.008 + 0.01.
  CHECK(s->gemm_ms(100, 1000, 1000, "bfloat16") == Approx(0.018));
  // m=1: e_c = 0.5/101: 2e6 x 101 / 5e13 = 0.00404 ms; bytes 2.004e6 / 5e11 = 0.004008 ms.
  CHECK(s->gemm_ms(1, 1000, 1000, "bfloat16") == Approx(0.01404));
  // fp8: 1-byte operands, fp8 peak. m=1000: 2e9 / 1e14 = 0.02 ms; bytes 1e6+1e6+2e6 -> 0.008.
  CHECK(s->gemm_ms(1000, 1000, 1000, "fp8") == Approx(0.03));
}

TEST_CASE("shape roofline: attention, MoE, all-reduce and elementwise by hand", "[models]") {
  const auto s = toy();
  // Prefill b=1, isl=1000, 8 heads of 128, 2 KV heads: 2 x 1e6 x 8 x 128 = 2.048e9 FLOPs
  // / 5e13 = 0.04096 ms; bytes 1000 x 128 x (32 + 8) = 5.12e6 / 5e11 = 0.01024 ms.
  CHECK(s->context_attention_ms(1, 1000, k_heads, "bfloat16", "bfloat16") == Approx(0.05096));
  // Decode b=2 against 1000 keys: KV 2x1000x2x2x128x2 = 2,048,000 + Q/O 4x2x8x128 = 8,192, plus
  // 1000 x 2 sequences = 2,058,192 B / 5e11 = 0.004116384 ms; + 0.01 + 2 x 0.001.
  CHECK(s->generation_attention_ms(2, 1000, k_heads, "bfloat16", "bfloat16") ==
        Approx(0.016116384));
  // 1 token, top-2 of 8 experts: 8 x (1 - 0.75) = 2 active; 2 pairs x 3 x 1000 x 2000 x 2 =
  // 2.4e7 FLOPs (0.00048 ms); bytes 2 x 3 x 1000 x 2000 x 2 + 2 x 1000 x 4 = 2.4008e7 -> 0.048016.
  const MoeShape moe{1000, 2000, 8, 2, 1, 1};
  CHECK(s->moe_ms(1, moe, "bfloat16", "balanced") == Approx(0.060016));
  // 1e6 elements over 4 GPUs: 2 x 3/4 x 2e6 B / (1e11 x 0.5) = 0.06 ms; + 0.01 + 2 x 0.002.
  CHECK(s->allreduce_ms(1e6, 4) == Approx(0.074));
  CHECK(s->elementwise_ms(1e6) == Approx(0.003));
}

TEST_CASE("shape roofline: more tokens or more KV is never faster, on every committed fit",
          "[models]") {
  const HardwareSpec hw = load_hardware("h100-sxm");
  for (const std::string& name : shape_roofline_fit_names()) {
    INFO(name);
    const Cfg c = Cfg::root(doc_of("fit: " + name + "\n"));
    const auto s = make_shape_roofline_source(c, hw);
    const MoeShape moe{4096, 14336, 8, 2, 1, 1};
    double gemm = 0, ctx = 0, gen = 0, kv = 0, mo = 0, ar = 0;
    for (double x = 1; x <= 65536; x *= 1.25) {
      const double g = s->gemm_ms(x, 4096, 4096, "bfloat16");
      const double c1 = s->context_attention_ms(1, x, k_heads, "bfloat16", "bfloat16");
      const double d1 = s->generation_attention_ms(x, 1024, k_heads, "bfloat16", "bfloat16");
      const double d2 = s->generation_attention_ms(8, x, k_heads, "bfloat16", "bfloat16");
      const double m1 = s->moe_ms(x, moe, "bfloat16", "balanced");
      const double a1 = s->allreduce_ms(x * 4096, 8);
      CHECK(g >= gemm);
      CHECK(c1 >= ctx);
      CHECK(d1 >= gen);
      CHECK(d2 >= kv);
      CHECK(m1 >= mo);
      CHECK(a1 >= ar);
      gemm = g, ctx = c1, gen = d1, kv = d2, mo = m1, ar = a1;
    }
    CHECK(gemm > 0);
  }
}

TEST_CASE("shape roofline: the default fit is fit-all, and it names chip and file", "[models]") {
  const auto s = make_shape_roofline_source(Cfg::root(doc_of("source: roofline\n")),
                                            load_hardware("h100-sxm"));
  CHECK(s->describe() == "h100-sxm shape-aware roofline (configs/shape-roofline/fit-all.yaml)");
  // H100, 8192^3 bf16 GEMM measured at 1.405 ms (TRT-LLM): the fit lands within 25 %.
  CHECK(s->gemm_ms(8192, 8192, 8192, "bfloat16") == Approx(1.405).epsilon(0.25));
}

TEST_CASE("shape roofline: refusals name what is missing and what is allowed", "[models]") {
  // An unknown key in the fit file.
  std::string fit = k_fit;
  fit.replace(fit.find("latency_ms: 0.001}"), 18, "latency_ms: 0.001, typo_key: 1}");
  CHECK_THAT(error_of([&] { (void)toy(fit); }), Catch::Contains("typo_key"));
  CHECK_THAT(error_of([&] { (void)toy("gemm:\n  int4: {compute_efficiency: 1}\n"); }),
             Catch::Contains("int4"));
  // A chip without an fp8 peak asked for an fp8 GEMM.
  std::string chip = k_chip;
  chip.replace(chip.find("bf16: 100, fp8: 200"), 19, "bf16: 100");
  const auto s = toy(k_fit, chip);
  CHECK_THAT(error_of([&] { (void)s->gemm_ms(1, 1024, 1024, "fp8"); }),
             Catch::Contains("no fp8 peak") && Catch::Contains("bf16"));
  // nvfp4 needs an fp4 peak, which the catalogue has not.
  CHECK_THAT(error_of([&] { (void)toy()->gemm_ms(1, 1024, 1024, "nvfp4"); }),
             Catch::Contains("fp4"));
  // A variant the fit does not hold lists those it does.
  CHECK_THAT(
      error_of([&] { (void)toy()->gemm_ms(1, 1024, 1024, "fp8_block"); }),
      Catch::Contains("no gemm curve for \"fp8_block\"") && Catch::Contains("bfloat16, fp8"));
  CHECK_THAT(
      error_of([&] {
        (void)toy()->moe_ms(8, MoeShape{1024, 1024, 8, 2, 1, 1}, "bfloat16", "power_law_1.2");
      }),
      Catch::Contains("balanced"));
  CHECK_THAT(error_of([&] {
               (void)make_shape_roofline_source(Cfg::root(doc_of("fit: fit-al\n")),
                                                load_hardware("h100-sxm"));
             }),
             Catch::Contains("unknown fit \"fit-al\"") && Catch::Contains("fit-all"));
  CHECK_THAT(error_of([&] {
               (void)make_shape_roofline_source(Cfg::root(doc_of("fit: missing/fit.yaml\n")),
                                                load_hardware("h100-sxm"));
             }),
             Catch::Contains("fit"));
}

}  // namespace t_models_shape_roofline_test
