// The operator step model on a made-up table folder, tests/data/aic-tiny/ (README there):
//   gemm        0.01 x (n k / 65536) x g(m), g = 1 up to m = 16, m / 16 beyond; fp8 half that
//   context     0.00025 x heads x batch x (isl / 16)^2      (batch 4 at isl 256 not measured)
//   generation  0.000025 x heads x batch x kv; fp8 KV half that
//   moe         0.05 x g(tokens) balanced, 0.06 x g(tokens) power_law_1.2
//   all-reduce  custom 0.01 x max(1, elements / 4096), nccl 0.02 x the same (2 GPUs)
//   elementwise 2 us + bytes / (1e15 B/s x 0.5): 0.002 ms a pass (the bytes add < 1e-5 ms)
// tiny-dense: 2 layers, hidden 256, 4 heads / 2 KV heads of 64, MLP 512, vocab 1024.
// Per layer at TP1: QKV (512 x 256) 0.02 g, O (256 x 256) 0.01 g, gate+up (1024 x 256) 0.04 g,
// down (256 x 512) 0.02 g: 0.09 g, so 0.18 g(T) for both layers; 5 elementwise passes a layer
// and 2 a step: 12 x 0.002 = 0.024 ms; LM head (1024 x 256) 0.04 g(sequences).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "models/catalog.h"
#include "models/operator_tables.h"
#include "models/shape_roofline.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_operator_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_dir = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";

std::string config(const std::string& extra, const std::string& model = "tiny-dense.yaml",
                   const std::string& ops = "gpu: tiny_gpu, engine: vllm") {
  const std::string path = model[0] == '/' ? model : k_dir + "/" + model;
  return "kind: operator\nmodel: " + path +
         "\nhardware: h100-sxm\noperators: {source: tables, path: " + k_dir + ", " + ops + "}\n" +
         extra;
}

std::unique_ptr<StepTimeModel> build(const std::string& yaml) {
  auto doc = doc_of(yaml);
  auto m = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return m;
}

StepShape decode(int seqs, int64_t kv_each) {
  StepShape s;
  s.sequences = s.decode_sequences = seqs;
  s.decode_context_tokens = seqs * kv_each;
  s.decode_context_max = s.decode_context_min = kv_each;
  return s;
}

StepShape prefill(int64_t chunk, int64_t earlier) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = chunk;
  s.prefill_tokens_sq = static_cast<double>(chunk * chunk);
  s.prefill_context_tokens = earlier;
  return s;
}

Approx near(double v) { return Approx(v).epsilon(1e-4); }

std::unique_ptr<OperatorSource> tiny_source(bool nccl = false) {
  return open_operator_tables({k_dir, "tiny_gpu", "vllm", nccl});
}

}  // namespace

TEST_CASE("operator: a pure decode step adds GEMMs, LM head and decode attention", "[models]") {
  auto m = build(config(""));
  // T = 8: 0.18 + 0.024; LM head 0.04; attention 2 layers x 0.0001 x 8 x 64 = 0.1024.
  CHECK(m->step_ms(decode(8, 64)) == near(0.18 + 0.024 + 0.04 + 0.1024));
  // Uneven lengths: 4 decodes averaging 16 (t = 2 x 0.0001 x 4 x 16 = 0.0128) with one at 256:
  // that one alone takes 2 x 0.0001 x 256 = 0.0512, which bounds the step's attention.
  StepShape s = decode(4, 16);
  s.decode_context_max = 256;
  s.decode_context_min = 1;
  CHECK(m->step_ms(s) == near(0.204 + 0.04 + 0.0512));
}

TEST_CASE("operator: a prefill step charges the chunk's attention at its length", "[models]") {
  auto m = build(config(""));
  // T = 256 (g = 16): 0.18 x 16 + 0.024; LM head at 1 sequence 0.04; context attention at
  // batch 1, isl 256: 2 layers x 0.001 x 16^2 = 0.512.
  CHECK(m->step_ms(prefill(256, 0)) == near(2.904 + 0.04 + 0.512));
}

TEST_CASE("operator: a continuing chunk attends its earlier context", "[models]") {
  auto m = build(config(""));
  // 16 new tokens after 240 stored: pairs = 16^2 / 2 + 16 x 240 = 3968, the pairs of a fresh
  // prefill of L = sqrt(2 x 3968) = 89.08 tokens. Between the table's isl 64 (0.016) and 256
  // (0.256), log-log: 0.016 x (89.08 / 64)^2 = 0.031 a layer, 0.062 for two.
  CHECK(m->step_ms(prefill(16, 240)) == near(0.204 + 0.04 + 0.062));
}

TEST_CASE("operator: tensor parallel halves the GEMMs and adds two all-reduces", "[models]") {
  // TP2: 2 heads / 1 KV head a GPU. QKV (256 x 256) 0.01, O (256 x 128) 0.005, gate+up
  // (512 x 256) 0.02, down (256 x 256) 0.01: 0.09 for two layers at T = 16; all-reduce of
  // 16 x 256 = 4096 elements 0.01, 4 of them 0.04; LM head (512 x 256) 0.02; attention
  // 2 x 0.000025 x 2 x 16 x 64 = 0.1024.
  auto m = build(config("tensor_parallel: 2\n"));
  CHECK(m->step_ms(decode(16, 64)) == near(0.09 + 0.04 + 0.024 + 0.02 + 0.1024));
  auto nccl = build(config("tensor_parallel: 2\n", "tiny-dense.yaml",
                           "gpu: tiny_gpu, engine: vllm, allreduce: nccl"));
  CHECK(nccl->step_ms(decode(16, 64)) == near(0.09 + 0.08 + 0.024 + 0.02 + 0.1024));
}

TEST_CASE("operator: a plain MLP runs up and down, no gate", "[models]") {
  // tiny-plain is tiny-dense with mlp: plain: the up GEMM is (512 x 256) 0.02 g instead of the
  // gate+up (1024 x 256) 0.04 g, so 0.07 g a layer, 0.14 g(T) for both; the activation pass
  // reads one input instead of two (its bytes add < 1e-5 ms). At TP2 the up GEMM is
  // (256 x 256) 0.01 against gate+up's 0.02: 0.09 - 2 x 0.01 = 0.07 for both layers.
  auto m = build(config("", "tiny-plain.yaml"));
  CHECK(m->step_ms(decode(8, 64)) == near(0.14 + 0.024 + 0.04 + 0.1024));
  auto tp2 = build(config("tensor_parallel: 2\n", "tiny-plain.yaml"));
  CHECK(tp2->step_ms(decode(16, 64)) == near(0.07 + 0.04 + 0.024 + 0.02 + 0.1024));
}

TEST_CASE("operator: a mixture of experts runs the router and the MoE block", "[models]") {
  // Per layer QKV 0.02, O 0.01, router (4 x 256: below the smallest n, the n = 128 line) 0.005,
  // MoE power_law_1.2 0.06: 0.19 for two; 4 elementwise passes a layer and 2 a step: 0.02.
  auto m = build(config("", "tiny-moe.yaml"));
  CHECK(m->step_ms(decode(8, 64)) == near(0.19 + 0.02 + 0.04 + 0.1024));
  auto balanced = build(config("moe_distribution: balanced\n", "tiny-moe.yaml"));
  CHECK(balanced->step_ms(decode(8, 64)) == near(0.19 - 0.02 + 0.02 + 0.04 + 0.1024));
}

TEST_CASE("operator: fp8 weights keep a bf16 LM head unless told", "[models]") {
  auto fp8 = build(config("weight_dtype: fp8\n"));
  CHECK(fp8->step_ms(decode(8, 64)) == near(0.09 + 0.024 + 0.04 + 0.1024));
  auto all = build(config("weight_dtype: fp8\nlm_head_dtype: fp8\nkv_dtype: fp8\n"));
  CHECK(all->step_ms(decode(8, 64)) == near(0.09 + 0.024 + 0.02 + 0.0512));
}

TEST_CASE("operator: the tables interpolate log-log and extrapolate as documented", "[models]") {
  auto src = tiny_source();
  const AttentionHeads h{4, 2, 64};
  // isl 128 between 64 (0.016) and 256 (0.256): log-log gives 0.016 x 2^2 = 0.064 (linear
  // interpolation would give 0.096).
  CHECK(src->context_attention_ms(1, 128, h, "bfloat16", "bfloat16") == near(0.064));
  // Beyond isl 256: the segment from 64 (the largest at most half of 256) has slope 2.
  CHECK(src->context_attention_ms(1, 1024, h, "bfloat16", "bfloat16") == near(0.256 * 16));
  // The hole at batch 4, isl 256 continues the isl-256 line over batch: 2 x 0.512.
  CHECK(src->context_attention_ms(4, 256, h, "bfloat16", "bfloat16") == near(1.024));
  // GEMM: below the smallest m the latency holds; beyond 256 the m slope is at least 1 (the
  // (128, 128) line's last segment, 16 -> 256, rises only 0.0025 -> 0.005).
  CHECK(src->gemm_ms(1, 256, 256, "bfloat16") == near(0.01));
  CHECK(src->gemm_ms(1024, 128, 128, "bfloat16") == near(0.005 * 4));
  CHECK(src->gemm_ms(1024, 256, 256, "bfloat16") == near(0.01 * 64));
  // Below the smallest n the n = 128 line; the never-measured (1024, 512) line is replaced by
  // its nearest measured neighbour along n, (512, 512).
  CHECK(src->gemm_ms(16, 64, 128, "bfloat16") == near(0.0025));
  CHECK(src->gemm_ms(16, 1024, 512, "bfloat16") == near(0.04));
  // m between 16 and 256 on a slope-1 line; n between 256 and 512 log-log.
  CHECK(src->gemm_ms(64, 256, 256, "bfloat16") == near(0.04));
  CHECK(src->gemm_ms(16, 362, 256, "bfloat16") == near(0.01 * 362.0 / 256));
  CHECK(src->allreduce_ms(100, 2) == near(0.01));
  CHECK(tiny_source(true)->allreduce_ms(8192, 2) == near(0.04));
  CHECK(src->elementwise_ms(1e9) == near(0.002 + 1e9 / 5e11));
  CHECK(src->describe() == "tiny_gpu vllm-0.1.0 tables");
}

TEST_CASE("operator: refusals name what is missing and what the tables have", "[models]") {
  CHECK_THROWS_WITH(
      build(config("", "tiny-dense.yaml", "gpu: nope, engine: vllm")),
      Catch::Contains("gpu \"nope\": no such folder") && Catch::Contains("(GPUs there: tiny_gpu)"));
  CHECK_THROWS_WITH(build(config("", "tiny-dense.yaml", "gpu: tiny_gpu, engine: sglang")),
                    Catch::Contains("engine \"sglang\"") && Catch::Contains("vllm-0.1.0"));
  CHECK_THROWS_WITH(build(config("weight_dtype: nvfp4\n")),
                    Catch::Contains("no gemm dtype column latency_ms_nvfp4 (it has: bfloat16, "
                                    "fp8, fp8_block)"));
  CHECK_THROWS_WITH(build(config("weight_dtype: fp8_block\n")),
                    Catch::Contains("column latency_ms_fp8_block has no measured cell"));
  CHECK_THROWS_WITH(build(config("tensor_parallel: 4\n")),
                    Catch::Contains("no all-reduce rows for 4 GPUs (GPU counts there: 2)"));
  std::string wide =
      "name: wide\nsource: test\nlayers: 2\nhidden_size: 512\nattention_heads: 8\n"
      "kv_heads: 2\nhead_dim: 64\nintermediate_size: 512\nvocab_size: 1024\n"
      "parameters: 2000000\nmax_context_tokens: 4096\n";
  const std::string wide_path = write_temp("wide.yaml", wide);
  CHECK_THROWS_WITH(build(config("", wide_path)),
                    Catch::Contains("no rows for 8 query / 2 KV heads of dimension 64 per GPU") &&
                        Catch::Contains("there: 2/1 heads x 64, 4/2 heads x 64)"));
  CHECK_THROWS_WITH(build(config("tensor_parallel: 2\nexpert_parallel: 2\n", "tiny-moe.yaml")),
                    Catch::Contains("no rows for 4 experts of hidden 256 x inter 128, top-2, in "
                                    "bfloat16 at moe_tp 1 moe_ep 2") &&
                        Catch::Contains("that model is there as: bfloat16 moe_tp 1 moe_ep 1"));
  CHECK_THROWS_WITH(build(config("moe_distribution: zipf\n", "tiny-moe.yaml")),
                    Catch::Contains("no MoE distribution column latency_ms_zipf (it has: "
                                    "balanced, power_law_1.2)"));
  CHECK_THROWS_WITH(tiny_source()->allreduce_ms(100, 8),
                    Catch::Contains("no all-reduce rows for 8 GPUs (GPU counts there: 2)"));
  CHECK_THROWS_WITH(build(config("expert_parallel: 2\n")),
                    Catch::Contains("only for a mixture of experts"));
  CHECK_THROWS_WITH(build(config("tensor_parallel: 3\n")),
                    Catch::Contains("must divide tiny-dense's 4 attention heads"));
  CHECK_THROWS_WITH(build(config("speed: 2\n")), Catch::Contains("speed"));
  CHECK_THROWS_WITH(build(config("", "tiny-dense.yaml", "gpu: tiny_gpu, engine: vllm, typo: 1")),
                    Catch::Contains("typo"));
}

TEST_CASE("operator: the roofline source plugs into the same composition", "[models]") {
  // tiny-dense on an H100's datasheet with the committed fit: one decode at KV 128 (a sampled
  // size, so no interpolation) is the documented sum of the source's own answers.
  const std::string yaml = "kind: operator\nmodel: " + k_dir +
                           "/tiny-dense.yaml\nhardware: h100-sxm\noperators: {source: roofline}\n";
  auto m = build(yaml);
  auto doc = doc_of("source: roofline\n");
  const auto src = make_shape_roofline_source(Cfg::root(doc), load_hardware("h100-sxm"));
  const std::string bf = "bfloat16";
  const auto ew = [&](double bytes) { return src->elementwise_ms(bytes); };
  const double layer = src->gemm_ms(1, 512, 256, bf) + src->gemm_ms(1, 256, 256, bf) +
                       src->gemm_ms(1, 1024, 256, bf) + src->gemm_ms(1, 256, 512, bf) +
                       ew(3 * 512 * 2) + 2 * ew(4 * 256 * 2) + ew(2 * (256 + 128) * 2) +
                       ew(2 * 128 * (2 + 2)) +
                       src->generation_attention_ms(1, 128, {4, 2, 64}, bf, bf);
  const double expected = 2 * layer + 2 * ew(2 * 256 * 2) + src->gemm_ms(1, 1024, 256, bf);
  CHECK(m->step_ms(decode(1, 128)) == Approx(expected).epsilon(1e-9));
  // nvfp4 has no peak in the catalogue: refused, naming the dtype.
  std::string msg = "(no error)";
  try {
    (void)build(yaml + "weight_dtype: nvfp4\n");
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::Contains("nvfp4"));
}

TEST_CASE("operator: scale_to_hardware moves each operator by its roofline ratio", "[models]") {
  // tiny_gpu's roofs: 1e15 B/s, 1e16 FLOP/s (ridge 10 FLOP/B); h100-sxm's: 3.35e12 B/s,
  // 989.4e12 FLOP/s (ridge 295). Ratio = max(B / 3.35e12, F / 989.4e12) / max(B / 1e15, F / 1e16).
  const auto src = scale_to_roofs(tiny_source(), {1e15, 1e16}, {3.35e12, 989.4e12});
  // GEMM m = 8, n = k = 256 (0.01 ms on the table): B = 2 x 8 x 256 + 2 x 256 x 256 + 2 x 8 x 256
  // = 139264, F = 2 x 8 x 256 x 256 = 1048576 (7.5 FLOP/B): memory-bound on both parts, so the
  // bandwidth ratio 1e15 / 3.35e12 = 298.51.
  CHECK(src->gemm_ms(8, 256, 256, "bfloat16") == near(0.01 * 1e15 / 3.35e12));
  // GEMM m = n = k = 256 (0.16 ms): B = 3 x 2 x 256^2 = 393216, F = 2 x 256^3 = 33554432
  // (85 FLOP/B): compute-bound on tiny_gpu (3.3554e-9 s), memory-bound on the H100
  // (1.17378e-7 s): ratio 34.982.
  CHECK(src->gemm_ms(256, 256, 256, "bfloat16") ==
        near(0.16 * (393216 / 3.35e12) / (33554432 / 1e16)));
  // Decode attention reads the KV: memory-bound, the bandwidth ratio.
  CHECK(src->generation_attention_ms(8, 64, {4, 2, 64}, "bfloat16", "bfloat16") ==
        near(0.000025 * 4 * 8 * 64 * 1e15 / 3.35e12));
  // All-reduces are the interconnect's: unchanged; elementwise passes take the bandwidth ratio.
  CHECK(src->allreduce_ms(4096, 2) == near(0.01));
  CHECK(src->elementwise_ms(0) == near(0.002 * 1e15 / 3.35e12));
  // Through the config: a decode step of 8 at KV 64 is memory-bound in every term (the GEMMs at
  // m = 8 and the LM head at m = 8 are below both ridges), so the whole step scales by 298.51.
  auto plain = build(config(""));
  auto scaled =
      build(config("", "tiny-dense.yaml", "gpu: tiny_gpu, engine: vllm, scale_to_hardware: true"));
  CHECK(scaled->step_ms(decode(8, 64)) == near(plain->step_ms(decode(8, 64)) * 1e15 / 3.35e12));
}

TEST_CASE("operator: the newest version folder is found by comparing numbers as numbers",
          "[models][operator]") {
  // Folders vllm-0.1.0, vllm-0.19.0, vllm-0.9.0 and nccl-1.0.0, nccl-1.10.0, nccl-1.9.0 (listed
  // in this text order): the newest is 0.19.0 and 1.10.0, which a text comparison (or one that
  // skips a character) would not pick.
  namespace fs = std::filesystem;
  const fs::path root = temp_dir() / "aic-versions";
  fs::remove_all(root);
  fs::copy(k_dir, root, fs::copy_options::recursive);
  const fs::path gpu = root / "tiny_gpu";
  for (const char* v : {"vllm-0.19.0", "vllm-0.9.0"})
    fs::copy(gpu / "vllm-0.1.0", gpu / v, fs::copy_options::recursive);
  for (const char* v : {"nccl-1.10.0", "nccl-1.9.0"})
    fs::copy(gpu / "nccl-1.0.0", gpu / v, fs::copy_options::recursive);
  const auto src = open_operator_tables({root.string(), "tiny_gpu", "vllm", false});
  CHECK_THAT(src->describe(), Catch::StartsWith("tiny_gpu vllm-0.19.0 (each table from the "
                                                "newest vllm-* folder with it)"));
  // The newest nccl folder is the one read: only nccl-1.10.0 is left readable, the others
  // emptied, so any other pick fails to read its table.
  for (const char* v : {"nccl-1.0.0", "nccl-1.9.0"}) {
    std::ofstream(gpu / v / "nccl.csv", std::ios::trunc) << "";
  }
  const auto nccl = open_operator_tables({root.string(), "tiny_gpu", "vllm", true});
  CHECK(nccl->allreduce_ms(4096, 2) == Approx(0.02));
  fs::remove_all(root);
}

TEST_CASE("operator: a version number of ten digits or more is compared as text",
          "[models][operator]") {
  // Numbers of up to 9 digits compare as numbers, longer ones as text. Folders vllm-0.1.0 and
  // vllm-0000000000.0.1, listed in that text order ('.' sorts before '0'): their second tokens
  // 0 and 0000000000 are equal as numbers, which would leave the next ones, 1 > 0, to pick
  // vllm-0.1.0; as text "0" is a prefix of "0000000000", so vllm-0000000000.0.1 is the newer.
  namespace fs = std::filesystem;
  const fs::path root = temp_dir() / "aic-long-version";
  fs::remove_all(root);
  fs::copy(k_dir, root, fs::copy_options::recursive);
  const fs::path gpu = root / "tiny_gpu";
  fs::copy(gpu / "vllm-0.1.0", gpu / "vllm-0000000000.0.1", fs::copy_options::recursive);
  const auto src = open_operator_tables({root.string(), "tiny_gpu", "vllm", false});
  CHECK_THAT(src->describe(), Catch::StartsWith("tiny_gpu vllm-0000000000.0.1 (each table from "
                                                "the newest vllm-* folder with it)"));
  fs::remove_all(root);
}

TEST_CASE(
    "operator: the NCCL table's all-reduce is read from its half rows only, a message of "
    "0 bytes is refused",
    "[models][operator]") {
  // The tiny nccl.csv holds all_gather and int8 rows that are faster (0.001 ms) than the half
  // all_reduce rows (0.02 ms at 4,096): only the latter are all-reduce times of bf16 activations.
  const auto nccl = open_operator_tables({k_dir, "tiny_gpu", "vllm", true});
  CHECK(nccl->allreduce_ms(4096, 2) == Approx(0.02));
  CHECK(nccl->allreduce_ms(256, 2) == Approx(0.02));
  namespace fs = std::filesystem;
  const fs::path root = temp_dir() / "aic-nccl-zero";
  fs::remove_all(root);
  fs::copy(k_dir, root, fs::copy_options::recursive);
  std::ofstream(root / "tiny_gpu" / "nccl-1.0.0" / "nccl.csv", std::ios::trunc)
      << "op_name,nccl_dtype,num_gpus,message_size,latency_ms\nall_reduce,half,2,0,0.01\n";
  const auto zero = open_operator_tables({root.string(), "tiny_gpu", "vllm", true});
  CHECK_THROWS_WITH(zero->allreduce_ms(4096, 2),
                    Catch::Contains("nccl.csv:2") && Catch::Contains("message_size"));
  fs::remove_all(root);
}

TEST_CASE("operator: a MoE shape not measured lists the shapes that are", "[models][operator]") {
  // hidden 512 is not in moe.csv; no row has the model's shape, so the message lists every
  // hidden/inter/experts/top-k there is, each field from its own column.
  const auto src = tiny_source();
  MoeShape shape;
  shape.hidden_size = 512;
  shape.inter_size = 128;
  shape.experts = 4;
  shape.top_k = 2;
  CHECK_THROWS_WITH(src->moe_ms(16, shape, "bfloat16", "balanced"),
                    Catch::Contains("hidden/inter/experts/top-k there: 256/128/4/2"));
}

}  // namespace t_models_operator_test
