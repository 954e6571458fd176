// scale_to_roofs (models/operator_tables.h) over a stub source that times every operator at
// 1 ms: each scaled time is then the roofline ratio alone, hand-worked here. The roofs are
// chosen so the source's datasheet is compute-bound and the target memory-bound for every
// operator, which makes the ratio (bytes / target bandwidth) / (flops / source peak): the
// bytes and the flops each operator counts both show. And the table folder's refusals that
// name what is missing (no table file, no nccl-* folder, no datasheet).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "models/operator_source.h"
#include "models/operator_tables.h"
#include "tests/models/operator_stubs.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_scaled_source_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

struct Stub final : UnitOperatorSource {
  std::vector<double> breakpoints(OperatorAxis) const override { return {7}; }
};

// Source: 1e15 B/s and 1e12 FLOP/s (compute-bound); target: 1e12 B/s and 1e18 FLOP/s
// (memory-bound). The ratio is bytes / flops for every operator below.
std::unique_ptr<OperatorSource> scaled() {
  return scale_to_roofs(std::make_unique<Stub>(), Roofs{1e15, 1e12}, Roofs{1e12, 1e18});
}

}  // namespace

TEST_CASE("scaled source: every operator scales by its bytes over its flops between the roofs",
          "[models][operator]") {
  const auto s = scaled();
  CHECK(s->describe() == "stub scaled to 1000 GB/s and 1000000 TFLOP/s");
  // GEMM m 4, n 8, k 16: bytes 2mk + w kn + 2mn = 128 + 128 w + 64, flops 2mnk = 1024; a weight
  // takes 2 bytes in bfloat16, 1 in fp8 (and the other 8-bit formats), 0.5 in the 4-bit ones.
  CHECK(s->gemm_ms(4, 8, 16, "bfloat16") == Approx(448.0 / 1024).epsilon(1e-12));
  CHECK(s->gemm_ms(4, 8, 16, "fp8") == Approx(320.0 / 1024).epsilon(1e-12));
  CHECK(s->gemm_ms(4, 8, 16, "int8_wo") == Approx(320.0 / 1024).epsilon(1e-12));
  for (const char* four_bit : {"nvfp4", "int4_wo", "w4a16_mxfp4"}) {
    INFO(four_bit);
    CHECK(s->gemm_ms(4, 8, 16, four_bit) == Approx(256.0 / 1024).epsilon(1e-12));
  }
  // Context attention, batch 2, isl 8, 4 heads and 2 KV heads of 16: bytes
  // 2 b isl hd (2 h + 2 kvh) = 6,144, flops 2 b h hd isl^2 = 16,384.
  const AttentionHeads h{4, 2, 16};
  CHECK(s->context_attention_ms(2, 8, h, "bfloat16", "bfloat16") ==
        Approx(6144.0 / 16384).epsilon(1e-12));
  // Generation, batch 2 at 8 KV tokens: bytes b kv 2 kvh hd 2 = 2,048, flops 4 b h hd kv = 4,096.
  CHECK(s->generation_attention_ms(2, 8, h, "bfloat16", "bfloat16") ==
        Approx(2048.0 / 4096).epsilon(1e-12));
  // Elementwise passes are memory-bound at both ends: 1e15 / 1e12. All-reduces are not scaled.
  CHECK(s->elementwise_ms(100) == Approx(1000).epsilon(1e-12));
  CHECK(s->allreduce_ms(4096, 2) == 1);
  CHECK(s->breakpoints(OperatorAxis::GemmTokens) == std::vector<double>{7});
}

TEST_CASE("scaled source: a MoE block counts the active experts' weights and the token traffic",
          "[models][operator]") {
  const auto s = scaled();
  // Hidden 1024, FFN 512 over moe_tp 2: 3 x 1024 x 512 / 2 = 786,432 weights an expert; 8
  // experts over moe_ep 2 leave 4 on this GPU; top-2.
  MoeShape m;
  m.hidden_size = 1024;
  m.inter_size = 512;
  m.experts = 8;
  m.top_k = 2;
  m.moe_tp = 2;
  m.moe_ep = 2;
  // 3 tokens reach min(4, 3 x 2) = 4 experts: bytes 4 x 786,432 x 2 + 4 x 3 x 1024 = 6,303,744;
  // flops 2 x 3 x 2 / 2 x 786,432 = 4,718,592.
  CHECK(s->moe_ms(3, m, "bfloat16", "balanced") == Approx(6303744.0 / 4718592).epsilon(1e-12));
  // In fp8 a weight is 1 byte (3,158,016 bytes), in nvfp4 half a byte (1,585,152).
  CHECK(s->moe_ms(3, m, "fp8", "balanced") == Approx(3158016.0 / 4718592).epsilon(1e-12));
  CHECK(s->moe_ms(3, m, "nvfp4", "balanced") == Approx(1585152.0 / 4718592).epsilon(1e-12));
  // 1 token reaches min(4, 2) = 2 experts: bytes 2 x 786,432 x 2 + 4 x 1024 = 3,149,824; flops
  // 2 x 1 x 2 / 2 x 786,432 = 1,572,864.
  CHECK(s->moe_ms(1, m, "bfloat16", "balanced") == Approx(3149824.0 / 1572864).epsilon(1e-12));
}

TEST_CASE("operator tables: a missing table, nccl folder or datasheet is named with what is there",
          "[models][operator]") {
  const fs::path tiny = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/aic-tiny";
  const fs::path d = temp_dir() / "aic";
  fs::copy(tiny, d, fs::copy_options::recursive);
  fs::remove(d / "tiny_gpu/vllm-0.1.0/gemm.csv");
  fs::remove_all(d / "tiny_gpu/nccl-1.0.0");
  auto error_of = [&](bool nccl, bool gemm) {
    try {
      const auto src = open_operator_tables({d.string(), "tiny_gpu", "vllm", nccl});
      if (gemm) (void)src->gemm_ms(1, 128, 128, "bfloat16");
      (void)src->allreduce_ms(4096, 2);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(error_of(false, true),
             Catch::Contains("tiny_gpu: no gemm.csv (nor gemm.csv.gz) in vllm (folders: "
                             "vllm-0.1.0)"));
  CHECK_THAT(error_of(true, false),
             Catch::Contains("tiny_gpu: no nccl-* folder (folders: vllm-0.1.0)"));
  CHECK(error_of(false, false) == "(no error)");
  CHECK_THAT(
      [&] {
        try {
          (void)read_table_roofs(d.string(), "no_gpu");
        } catch (const InputError& e) {
          return std::string(e.what());
        }
        return std::string("(no error)");
      }(),
      Catch::Contains("no_gpu.yaml: no datasheet for no_gpu"));
  const Roofs r = read_table_roofs(tiny.string(), "tiny_gpu");
  CHECK(r.bytes_per_s > 0);
  CHECK(r.flops_per_s > 0);
}

}  // namespace t_models_scaled_source_test
