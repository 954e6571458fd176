// Multi-head latent attention (docs/mla.md): DeepSeek-V3's catalogue figures, its KV bytes, the
// decode and prefill attention cost worked by hand, and the catalogue's attention keys.
#include "models/mla.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "core/config.h"
#include "core/errors.h"
#include "core/kv/kv_manager.h"
#include "models/catalog.h"
#include "models/kv_memory.h"
#include "models/operator_source.h"
#include "models/step_work.h"
#include "tests/support.h"

namespace t_models_mla_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Answers attention calls with a fixed time and records the last call's arguments.
class Recorder final : public OperatorSource {
 public:
  explicit Recorder(double ms) : m_ms(ms) {}
  std::string describe() const override { return "recorder"; }
  double gemm_ms(double m, double n, double k, const std::string&) const override {
    return 2 * m * n * k * 1e-12;
  }
  double context_attention_ms(double b, double isl, const AttentionHeads& h, const std::string&,
                              const std::string&) const override {
    last = h;
    last_batch = b;
    last_len = isl;
    return m_ms;
  }
  double generation_attention_ms(double b, double kv, const AttentionHeads& h, const std::string&,
                                 const std::string&) const override {
    last = h;
    last_batch = b;
    last_len = kv;
    return m_ms;
  }
  double moe_ms(double, const MoeShape&, const std::string&, const std::string&) const override {
    return 1;
  }
  double allreduce_ms(double, double) const override { return 1; }
  double elementwise_ms(double) const override { return 1; }

  mutable AttentionHeads last;
  mutable double last_batch = 0, last_len = 0;

 private:
  double m_ms;
};

MlaLayer deepseek_layer(double tp) {
  const ModelSpec m = load_model("deepseek-v3");
  return {m.mla, static_cast<double>(m.hidden_size), static_cast<double>(m.attention_heads) / tp};
}

std::string model_error(const std::string& yaml) {
  try {
    (void)parse_model(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string k_toy = R"(name: toy
source: written for this test
layers: 2
hidden_size: 1024
attention_heads: 16
kv_heads: 16
intermediate_size: 4096
vocab_size: 1000
parameters: 1000000
max_context_tokens: 4096
)";

}  // namespace

TEST_CASE("mla: deepseek-v3's catalogue figures and weight bytes") {
  const ModelSpec m = load_model("deepseek-v3");
  CHECK(m.is_mla());
  CHECK(m.layers == 61);
  CHECK(m.dense_layers == 3);
  CHECK(m.moe_layers() == 58);
  CHECK(m.shared_experts == 1);
  CHECK(m.mla.latent() == 576);
  // 671,026,419,200 weights at one byte each in fp8.
  CHECK(m.weight_bytes(Dtype::Fp8) == Approx(671026419200.0));
  // 58 layers x 256 experts x 3 x 7168 x 2048.
  CHECK(m.routed_expert_parameters() == Approx(58.0 * 256 * 3 * 7168 * 2048));
}

TEST_CASE("mla: the KV cache holds the latent and rotary key once a layer") {
  const ModelSpec m = load_model("deepseek-v3");
  // 61 layers x (512 + 64) x 2 bytes = 70,272: not 2 x 61 x 128 heads x 192 x 2 = 5,996,544.
  CHECK(m.kv_bytes_per_token(Dtype::Bf16) == 70272.0);
  CHECK(m.kv_bytes_per_token(Dtype::Fp8) == 35136.0);
  // Every GPU of a tensor-parallel group holds the whole latent.
  const StepWork w = StepWork::of(m, Dtype::Fp8, Dtype::Bf16, 8);
  CHECK(w.kv_bytes_per_token == 70272.0);
  // A decode pair: 4 x 61 layers x 16 heads a GPU x 576; a prefill pair 2 x 61 x 16 x 320.
  CHECK(w.flops_per_pair == Approx(4.0 * 61 * 16 * 576));
  CHECK(w.flops_per_prefill_pair == Approx(2.0 * 61 * 16 * 320));
}

TEST_CASE("mla: kv.memory sizes the latent and counts every data-parallel rank") {
  const auto doc = doc_of(
      "kv: {memory: {model: deepseek-v3, accelerator_gib: 80, tensor_parallel: 1, "
      "data_parallel: 72, weight_dtype: fp8, kv_dtype: bf16, utilization: 0.9}}\n");
  const KvMemory km = read_kv_memory(Cfg::root(doc).child("kv").child("memory"));
  // Weights a GPU: the 17,117,648,384 non-expert ones and 1/72 of the experts, one byte each.
  const double experts = 58.0 * 256 * 3 * 7168 * 2048;
  const double weights = (671026419200.0 - experts) + experts / 72;
  const double pool = 80 * 1073741824.0 * 0.9 - weights;
  CHECK(km.bytes_per_token == 70272.0);
  CHECK(km.capacity_tokens == static_cast<int64_t>(std::floor(pool / 70272.0) * 72));
}

TEST_CASE("mla: decode attention is the latent read or its FLOPs, whichever is longer") {
  const MlaLayer l = deepseek_layer(1);
  // Compute-bound: 4 x 2 sequences x 128 heads x 576 x 1,000 tokens = 589,824,000 FLOPs at
  // 10^9 FLOP/ms is 0.589824 ms, above the recorder's 0.1 ms read.
  const Recorder fast(0.1);
  CHECK(mla_generation_ms(fast, 2, 1000, l, "bfloat16", 1e9) == Approx(0.589824));
  // The read: one latent of 576 a token (half a K-and-V pair), every head's query.
  CHECK(fast.last.kv_heads * 2 * fast.last.head_dim == 576);
  CHECK(fast.last.heads == 128);
  CHECK(fast.last_batch == 2);
  CHECK(fast.last_len == 1000);
  const Recorder slow(5.0);
  CHECK(mla_generation_ms(slow, 2, 1000, l, "bfloat16", 1e9) == 5.0);
}

TEST_CASE("mla: prefill attention is plain attention of 192-wide keys and 128-wide values") {
  const MlaLayer l = deepseek_layer(8);
  const Recorder r(0.3);
  CHECK(mla_context_ms(r, 4, 2000, l, "bfloat16", "bfloat16") == 0.3);
  CHECK(r.last.heads == 16);
  CHECK(r.last.kv_heads == 16);
  CHECK(r.last.head_dim == 160);  // (192 + 128) / 2: the same FLOPs and bytes
}

TEST_CASE("mla: the projection GEMMs at their shapes") {
  const MlaLayer l = deepseek_layer(1);
  const Recorder r(1);
  // The recorder's GEMM is 2 m n k x 10^-12: q_a 7168 -> 1536, q_b 1536 -> 128 x 192,
  // kv_a 7168 -> 576, kv_b 512 -> 128 x 256, o 128 x 128 -> 7168, at 10 tokens.
  const double params =
      7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  CHECK(mla_projection_ms(r, l, 10, "fp8") == Approx(2 * 10 * params * 1e-12));
}

TEST_CASE("mla: the catalogue's attention keys are checked") {
  CHECK(parse_model(k_toy, "toy.yaml").attention == AttentionKind::Mha);
  CHECK_THAT(model_error(k_toy + "attention: gqa\n"),
             Catch::Contains("attention") && Catch::Contains("make it mha"));
  CHECK_THAT(model_error(k_toy + "attention: mla\n"), Catch::Contains("mla"));
  CHECK_THAT(model_error(k_toy + "mla: {kv_lora_rank: 512}\n"),
             Catch::Contains("only with attention: mla"));
  CHECK_THAT(model_error(k_toy + "dense_layers: 1\n"),
             Catch::Contains("only for a mixture of experts"));
  CHECK_THAT(model_error(k_toy + "experts: 8\nexperts_per_token: 2\ndense_layers: 2\n"),
             Catch::Contains("below layers"));
}

}  // namespace t_models_mla_test
