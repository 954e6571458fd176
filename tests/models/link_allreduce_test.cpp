// `operators.allreduce: link` (models/link_allreduce.h): the tables' all-reduce replaced by a
// ring over the catalogue's interconnect, by hand on the tiny tables; its keys' checks. And a
// chip's `measured` shares (models/catalog.h), which move the shape-aware roofline's datasheet.
#include "models/link_allreduce.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "core/errors.h"
#include "models/catalog.h"
#include "models/shape_roofline.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_link_allreduce_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_dir = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";

std::string config(const std::string& ops) {
  return "kind: operator\nmodel: " + k_dir +
         "/tiny-dense.yaml\nhardware: h100-sxm\ntensor_parallel: 2\n"
         "operators: {source: tables, path: " +
         k_dir + ", gpu: tiny_gpu, engine: vllm" + ops + "}\n";
}

std::unique_ptr<StepTimeModel> build(const std::string& yaml) {
  auto doc = doc_of(yaml);
  auto m = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return m;
}

std::string error_of(const std::string& yaml) {
  try {
    (void)build(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

StepShape decode(int seqs, int64_t kv_each) {
  StepShape s;
  s.sequences = s.decode_sequences = seqs;
  s.decode_context_tokens = seqs * kv_each;
  s.decode_context_max = s.decode_context_min = kv_each;
  return s;
}

// A toy chip and fit (every efficiency 0.5), as in shape_roofline_test.cpp, with and without
// measured shares.
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
const std::string k_measured = R"(measured: {source: a suite, memory_bandwidth_gb_per_s: 800,
  reference_bandwidth_share: 0.9, matrix_dtype: fp8, matrix_tflops: 100,
  reference_matrix_share: 0.75}
)";
const std::string k_fit = R"(gemm:
  fp8: {compute_efficiency: 0.5, m_half_rows: 0, nk_half: 0, bandwidth_efficiency: 0.5, weight_half_bytes: 0, latency_ms: 0.01}
)";

}  // namespace

TEST_CASE("link allreduce: a ring over one direction of the link at the efficiency",
          "[models][operator]") {
  // 4096 bf16 elements on 2 GPUs: 2 x 1/2 x 8192 bytes / (900 / 2 GB/s x 0.5) = 3.641e-5 ms,
  // plus 10 us.
  const LinkAllreduce l{900, 0.5, 10};
  CHECK(link_allreduce_ms(l, 4096, 2) == Approx(8192.0 / 225e9 * 1e3 + 0.01));
  // 4 GPUs: the share sent grows to 2 x 3/4.
  CHECK(link_allreduce_ms(l, 4096, 4) == Approx(1.5 * 8192.0 / 225e9 * 1e3 + 0.01));
}

TEST_CASE("link allreduce: the operator model's all-reduces come from the hardware's link",
          "[models][operator]") {
  // operator_test.cpp's TP2 decode: GEMMs 0.09, attention 0.1024, the rest 0.044; the table's
  // four all-reduces (0.04) become four of the link's.
  const auto table = build(config(""));
  const auto link = build(config(", allreduce: link, link_efficiency: 0.5, link_latency_us: 10"));
  const double ar = link_allreduce_ms({900, 0.5, 10}, 16 * 256, 2);
  CHECK(table->step_ms(decode(16, 64)) - link->step_ms(decode(16, 64)) ==
        Approx(0.04 - 4 * ar).epsilon(1e-6));
  // The defaults are the documented PCIe figures.
  const auto defaults = build(config(", allreduce: link"));
  CHECK(table->step_ms(decode(16, 64)) - defaults->step_ms(decode(16, 64)) ==
        Approx(0.04 - 4 * link_allreduce_ms({900, 0.65, 25}, 16 * 256, 2)).epsilon(1e-6));
  CHECK_THAT(error_of(config(", link_efficiency: 0.5")),
             Catch::Contains("link_efficiency") && Catch::Contains("allreduce: link"));
  CHECK_THAT(error_of(config(", allreduce: link, link_efficiency: 0")),
             Catch::Contains("link_efficiency"));
  CHECK_THAT(error_of(config(", allreduce: ring")), Catch::Contains("link"));
}

TEST_CASE("measured shares: the shape roofline moves the datasheet by the chip's over the fit's",
          "[models][operator]") {
  const auto plain =
      make_shape_roofline_source_from_text(k_fit, "fit.yaml", parse_hardware(k_chip, "c.yaml"));
  const auto measured = make_shape_roofline_source_from_text(
      k_fit, "fit.yaml", parse_hardware(k_chip + k_measured, "c.yaml"));
  // Compute-bound (m = n = k = 1000, 2e9 FLOPs): peak x (100 / 200) / 0.75 = 2/3 of it.
  CHECK(measured->gemm_ms(1000, 1000, 1000, "fp8") - 0.01 ==
        Approx((plain->gemm_ms(1000, 1000, 1000, "fp8") - 0.01) * 1.5));
  // Memory-bound (m = 1): bandwidth x (800 / 1000) / 0.9 = 0.889 of it.
  CHECK(measured->gemm_ms(1, 4000, 4000, "fp8") - 0.01 ==
        Approx((plain->gemm_ms(1, 4000, 4000, "fp8") - 0.01) * 0.9 / 0.8));
  // Measured figures above the datasheet are refused.
  CHECK_THROWS_WITH(
      parse_hardware(k_chip + "measured: {source: s, memory_bandwidth_gb_per_s: 1200, "
                              "reference_bandwidth_share: 0.9, matrix_tflops: 100, "
                              "reference_matrix_share: 0.7}\n",
                     "c.yaml"),
      Catch::Contains("memory_bandwidth_gb_per_s"));
}

}  // namespace t_models_link_allreduce_test
