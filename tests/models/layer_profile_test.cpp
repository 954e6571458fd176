// kind: layer_profile on excerpts of real vLLM layer profiles (tests/data/llmservingsim-tp1,
// a dense model, and tests/data/llmservingsim-moe, a mixture of experts).
#include "models/layer_profile.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/measurements.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_layer_profile_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_dir = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/llmservingsim-tp1";

// Everything but attention for 1 token and 1 sequence, 2 layers (microseconds, from the files):
// per layer 2 x layernorm 2.416 + qkv 35.8297 + rotary 2.709 + o_proj 25.664 + gate_up 159.488
// + act 2.67733 + down 85.5257; once embedding 3.14667 + final norm 2.42167 + lm_head 714.006
// + sampler 24.746.
constexpr double k_dense_layer = 2 * 2.416 + 35.8297 + 2.709 + 25.664 + 159.488 + 2.67733 + 85.5257;
constexpr double k_once = 3.14667 + 2.42167 + 714.006 + 24.746;

std::unique_ptr<StepTimeModel> model(const std::string& extra = "") {
  return make_step_time_model(
      Cfg::root(doc_of("kind: layer_profile\npath: " + k_dir + "\nlayers: 2\n" + extra)));
}

StepShape one_decode(int64_t kv) {
  StepShape s;
  s.sequences = s.decode_sequences = 1;
  s.decode_context_tokens = kv;
  return s;
}

}  // namespace

TEST_CASE("layer_profile: a profiled grid point gives the composed step exactly", "[models]") {
  // One decode at 16 KV tokens: attention 8.35233 us a layer.
  CHECK(model()->step_ms(one_decode(16)) ==
        Approx((2 * (8.35233 + k_dense_layer) + k_once) / 1000).epsilon(1e-12));
}

TEST_CASE("layer_profile: attention is interpolated between grid points", "[models]") {
  // KV 520 is halfway between 16 (8.35233 us) and 1024 (14.592 us).
  const double attn = 8.35233 + 0.5 * (14.592 - 8.35233);
  CHECK(model()->step_ms(one_decode(520)) ==
        Approx((2 * (attn + k_dense_layer) + k_once) / 1000).epsilon(1e-12));
}

TEST_CASE("layer_profile: missing grid corners are left out and the rest renormalised",
          "[models]") {
  // Chunk 8 with prefix 256, one decode at 16: the corners (chunk 0 / 16, prefix 0 / 512)
  // weigh 1/4 each; chunk 0 with prefix 512 was never profiled, so the other three count
  // 1/3 each: (8.35233 + 7.936 + 17.5893) / 3.
  const LayerProfile p(k_dir, 2);
  CHECK(p.attention_us(8, 256, 1, 16) == Approx((8.35233 + 7.936 + 17.5893) / 3).epsilon(1e-12));
}

TEST_CASE("layer_profile: tensor parallelism adds two ring all-reduces a layer", "[models]") {
  // tp 2, hidden 1000, 2 bytes: 2,000 bytes for 1 token; a 1 GB/s link moves 1e6 bytes/ms, so
  // one all-reduce is 10 us + 2 (2-1)/2 x 2,000 / 1e6 ms = 0.012 ms; 2 a layer x 2 layers.
  const double base = model()->step_ms(one_decode(16));
  const auto tp =
      model("tensor_parallel: 2\nhidden_size: 1000\nlink_gb_per_s: 1\nlink_latency_us: 10\n");
  CHECK(tp->step_ms(one_decode(16)) == Approx(base + 4 * 0.012).epsilon(1e-12));
  CHECK(model("overhead_ms: 1.5\n")->step_ms(one_decode(16)) == Approx(base + 1.5).epsilon(1e-12));
}

namespace {

// Two decodes at 16 and 1,024 KV tokens: mean 520, longest 1,024.
StepShape two_uneven_decodes() {
  StepShape s;
  s.sequences = s.decode_sequences = 2;
  s.decode_context_tokens = 16 + 1024;
  s.decode_context_min = 16;
  s.decode_context_max = 1024;
  return s;
}

// A copy of the dense excerpt as `<variant>/tp1` beside a meta.yaml with `skew_fit_yaml`.
std::string variant_with_meta(const std::string& skew_fit_yaml) {
  const auto root = temp_dir();
  std::filesystem::create_directories(root / "tp1");
  for (const char* f : {"attention.csv", "dense.csv", "per_sequence.csv"})
    std::filesystem::copy_file(std::filesystem::path(k_dir) / f, root / "tp1" / f);
  std::ofstream(root / "meta.yaml") << "model: test\n" << skew_fit_yaml;
  return (root / "tp1").string();
}

}  // namespace

TEST_CASE("layer_profile: skew_alpha moves uneven decodes' attention towards the longest",
          "[models]") {
  // At 2 decodes the grid has KV 16 (12.5653 us) and 1,024 (20.6177 us): at the mean 520,
  // halfway; at the longest, 20.6177. alpha 0.25 adds a quarter of the gap, a layer.
  const double mean = 12.5653 + 0.5 * (20.6177 - 12.5653);
  const double gap = 20.6177 - mean;
  const StepShape s = two_uneven_decodes();
  const double base = model()->step_ms(s);
  CHECK(model("skew_alpha: 0.25\n")->step_ms(s) ==
        Approx(base + 2 * 0.25 * gap / 1000).epsilon(1e-12));
  CHECK(model("skew_alpha: 0\n")->step_ms(s) == Approx(base).epsilon(1e-12));
  // Even lengths, or a shape without its longest read (built from measurements), are left alone.
  StepShape even = s;
  even.decode_context_tokens = 2 * 520;
  even.decode_context_min = even.decode_context_max = 520;
  CHECK(model("skew_alpha: 0.25\n")->step_ms(even) ==
        Approx(model()->step_ms(even)).epsilon(1e-12));
  StepShape unknown = s;
  unknown.decode_context_min = unknown.decode_context_max = 0;
  CHECK(model("skew_alpha: 0.25\n")->step_ms(unknown) == Approx(base).epsilon(1e-12));
}

TEST_CASE("layer_profile: skew_alpha: profile reads the pooled fit from meta.yaml", "[models]") {
  const std::string fit =
      "skew_fit:\n  enabled: true\n  per_tp:\n    1:\n      alpha_default: 0.25\n"
      "    2:\n      alpha_default: 0.5\n";
  const StepShape s = two_uneven_decodes();
  const auto at = [](const std::string& dir, const std::string& extra) {
    return make_step_time_model(
        Cfg::root(doc_of("kind: layer_profile\npath: " + dir + "\nlayers: 2\n" + extra)));
  };
  const std::string dir = variant_with_meta(fit);
  CHECK(at(dir, "skew_alpha: profile\n")->step_ms(s) ==
        Approx(at(dir, "skew_alpha: 0.25\n")->step_ms(s)).epsilon(1e-12));
  CHECK(at(dir + "/", "skew_alpha: profile\n")->step_ms(s) ==
        Approx(at(dir, "skew_alpha: 0.25\n")->step_ms(s)).epsilon(1e-12));
  // No fit, a disabled one, or none for this degree: refused, naming the key and the file.
  for (const std::string& meta : {std::string(), std::string("skew_fit:\n  enabled: false\n"),
                                  std::string("skew_fit:\n  enabled: true\n  per_tp:\n    2:\n"
                                              "      alpha_default: 0.5\n")})
    CHECK_THROWS_WITH(at(variant_with_meta(meta), "skew_alpha: profile\n"),
                      Catch::Contains("skew_alpha") &&
                          Catch::Contains("skew_fit.per_tp.1.alpha_default") &&
                          Catch::Contains("meta.yaml"));
  CHECK_THROWS_WITH(model("skew_alpha: 1.5\n"), Catch::Contains("skew_alpha"));
  for (const char* bad : {"skew_alpha: abc\n", "skew_alpha: [1]\n", "skew_alpha: {a: 1}\n"})
    CHECK_THROWS_WITH(model(bad), Catch::Contains("skew_alpha") &&
                                      Catch::Contains("a number from 0 to 1, or `profile`"));
  CHECK_THROWS_WITH(model("skew_alpha: profile\n"), Catch::Contains("meta.yaml"));
}

TEST_CASE("layer_profile: bad settings are named", "[models]") {
  CHECK_THROWS_WITH(
      make_step_time_model(
          Cfg::root(doc_of("kind: layer_profile\npath: /nonexistent\nlayers: 2\n"))),
      Catch::Contains("path = \"/nonexistent\" at test.yaml:2:7: no such profile folder"));
  CHECK_THROWS_WITH(model("tensor_parallel: 2\n"),
                    Catch::Contains("hidden_size: required key missing"));
}

// A mixture of experts: tests/data/llmservingsim-moe (Qwen3-30B-A3B on the RTX PRO 6000; tp2
// has no moe.csv, as LLMServingSim profiles experts once on one GPU). Microseconds, from the
// files: per layer at 1 token 2 x layernorm 2.12267 + qkv 9.39733 + qk_norm 1.936 + rotary
// 2.42133 + o_proj 7.435; once at 1 token and 1 sequence embedding 3.10433 + final norm 2.027
// + lm_head 420.224 + sampler 10.1227; moe.csv at 1 token and 8 experts 50.2297, at 2 tokens
// 56.1917 (8 experts) and 134.976 (16).
namespace {

const std::string k_moe = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/llmservingsim-moe";
constexpr double k_moe_layer1 = 2 * 2.12267 + 9.39733 + 1.936 + 2.42133 + 7.435;
constexpr double k_moe_once1 = 3.10433 + 2.027 + 420.224 + 10.1227;

std::unique_ptr<StepTimeModel> moe_model(const std::string& extra = "") {
  return make_step_time_model(
      Cfg::root(doc_of("kind: layer_profile\npath: " + k_moe + "/tp1\nlayers: 2\n" + extra)));
}

}  // namespace

TEST_CASE("layer_profile: experts and top-k are read off moe.csv, distinct experts expected",
          "[models]") {
  const LayerProfile p(k_moe + "/tp1", 2);
  REQUIRE(p.is_moe());
  const ExpertRouting& r = p.default_routing();
  CHECK(r.experts == 128);  // the most activated experts of any row
  CHECK(r.top_k == 8);      // the fewest: one token's
  CHECK(r.expert_parallel == 1);
  // One token activates exactly top_k; n tokens 128 (1 - (120/128)^n): 2 tokens 15.5, and
  // spread over 2 GPUs half that on each.
  CHECK(r.activated_per_gpu(1) == Approx(8).epsilon(1e-12));
  CHECK(r.activated_per_gpu(2) == Approx(15.5).epsilon(1e-12));
  const ExpertRouting halves{128, 8, 2};
  CHECK(halves.activated_per_gpu(2) == Approx(7.75).epsilon(1e-12));
  CHECK(r.activated_per_gpu(1000) == Approx(128).epsilon(1e-9));
}

TEST_CASE("layer_profile: the MoE block is looked up at the tokens and their expected experts",
          "[models]") {
  const LayerProfile p(k_moe + "/tp1", 2);
  // 1 token: exactly 8 experts, a profiled row.
  CHECK(p.moe_us(1, p.default_routing()) == Approx(50.2297).epsilon(1e-12));
  // 2 tokens: 15.5 experts, 15/16 of the way from the 8-expert row to the 16-expert one.
  CHECK(p.moe_us(2, p.default_routing()) ==
        Approx(56.1917 + 0.9375 * (134.976 - 56.1917)).epsilon(1e-12));
  // Below the fewest profiled experts (7.75 a GPU over 2): the 8-expert row.
  CHECK(p.moe_us(2, ExpertRouting{128, 8, 2}) == Approx(56.1917).epsilon(1e-12));
  // One decode at 16 KV tokens (attention 7.69067 a layer): qk_norm is in, the MLP is the MoE.
  CHECK(moe_model()->step_ms(one_decode(16)) ==
        Approx((2 * (7.69067 + k_moe_layer1 + 50.2297) + k_moe_once1) / 1000).epsilon(1e-12));
}

TEST_CASE("layer_profile: a tpN folder without moe.csv takes tp1's, the experts split N ways",
          "[models]") {
  const LayerProfile p(k_moe + "/tp2", 2);
  REQUIRE(p.is_moe());
  CHECK(p.default_routing().expert_parallel == 2);
  // tp2 at 1 token: 2 x layernorm 2.12267 + qkv 5.451 + qk_norm 1.936 + rotary 1.85567
  // + o_proj 8.10667; once embedding 2.76267 + final norm 2.027 + lm_head 216.053 + sampler
  // 10.1227; the MoE block at 4 experts a GPU, below the table: its 8-expert row, 50.2297.
  const double layer = 2 * 2.12267 + 5.451 + 1.936 + 1.85567 + 8.10667 + 50.2297;
  CHECK(p.non_attention_us(1, 1) ==
        Approx(2 * layer + 2.76267 + 2.027 + 216.053 + 10.1227).epsilon(1e-12));
}

TEST_CASE("layer_profile: a tpN folder counts up to tensor_parallel's 1,024", "[models]") {
  // tp1024 beside a tp1 with moe.csv takes its MoE table, split 1,024 ways; tp1025 (and tp12a)
  // is no TP folder, so nothing is looked for in ../tp1 and the MoE block is missing; tp01 is a
  // folder of tensor_parallel 1, which borrows no other folder's table.
  const auto root = temp_dir();
  std::filesystem::create_directories(root / "tp1");
  std::filesystem::copy_file(k_moe + "/tp1/moe.csv", root / "tp1" / "moe.csv");
  for (const char* name : {"tp1024", "tp1025", "tp12a", "tp01"}) {
    std::filesystem::create_directories(root / name);
    for (const char* f : {"attention.csv", "per_sequence.csv", "dense.csv"})
      std::filesystem::copy_file(k_moe + "/tp2/" + f, root / name / f);
  }
  const LayerProfile p((root / "tp1024").string(), 2);
  REQUIRE(p.is_moe());
  CHECK(p.default_routing().expert_parallel == 1024);
  for (const char* name : {"tp1025", "tp12a", "tp01"})
    CHECK_THROWS_WITH(LayerProfile((root / name).string(), 2), Catch::Contains("\"gate_up_proj\""));
}

TEST_CASE("layer_profile: data-parallel ranks split the step, the experts see all its tokens",
          "[models]") {
  // Two decodes at 16 KV over 2 ranks: each computes one (attention 7.69067, the 1-token dense
  // layers, once at 1 token and 1 sequence); the experts, shared by 2 GPUs, see 2 tokens: 7.75
  // experts a GPU, the 8-expert row at 2 tokens, 56.1917. Each layer all-gathers and
  // reduce-scatters the 2 tokens: 2 x 10 us + 2 (2-1)/2 x 2 x 1,000 x 2 bytes at 1e6 bytes/ms.
  StepShape s = one_decode(32);
  s.sequences = s.decode_sequences = 2;
  const auto dp = moe_model(
      "data_parallel: 2\nhidden_size: 1000\nlink_gb_per_s: 1\n"
      "link_latency_us: 10\n");
  const double comm_ms = 2 * (0.02 + 4000.0 / 1e6);
  CHECK(dp->step_ms(s) ==
        Approx((2 * (7.69067 + k_moe_layer1 + 56.1917) + k_moe_once1) / 1000 + comm_ms)
            .epsilon(1e-12));
}

TEST_CASE("layer_profile: work split unevenly over data-parallel ranks goes at the busiest's pace",
          "[models]") {
  // Three decodes at 16 KV over 2 ranks: one rank computes 2 (ceil(3 / 2)), so attention, the
  // dense layers and the once-a-step work are those of 2 sequences; the experts, shared by the 2
  // GPUs (7.75... experts a GPU at 3 tokens), see all 3 tokens, and the link carries all 3.
  const LayerProfile p(k_moe + "/tp1", 2);
  StepShape s = one_decode(48);
  s.sequences = s.decode_sequences = 3;
  const auto dp = moe_model(
      "data_parallel: 2\nhidden_size: 1000\nlink_gb_per_s: 1\n"
      "link_latency_us: 10\n");
  const ExpertRouting shared{128, 8, 2};
  const double layer = p.attention_us(0, 0, 2, 16) + p.layer_dense_us(2) + p.moe_us(3, shared);
  const double comm_ms = 2 * (0.02 + 6000.0 / 1e6);  // 2 layers x (2 latencies + 3 x 2,000 B)
  CHECK(dp->step_ms(s) == Approx((2 * layer + p.once_us(2, 2)) / 1000 + comm_ms).epsilon(1e-12));
  // The busiest rank's 2 sequences, not the 1.5 of an even split: one decode fewer on that
  // rank (2 over 2 ranks) changes only the experts' tokens and the link.
  StepShape two = one_decode(32);
  two.sequences = two.decode_sequences = 2;
  const double layer2 = p.attention_us(0, 0, 1, 16) + p.layer_dense_us(1) + p.moe_us(2, shared);
  CHECK(dp->step_ms(two) ==
        Approx((2 * layer2 + p.once_us(1, 1)) / 1000 + 2 * (0.02 + 4000.0 / 1e6)).epsilon(1e-12));
  CHECK(p.attention_us(0, 0, 2, 16) > p.attention_us(0, 0, 1, 16));
}

TEST_CASE("layer_profile: a prefill chunk is not split between data-parallel ranks", "[models]") {
  // One request's 16-token chunk runs on its own rank while the other idles: the busiest rank
  // computes all 16 tokens (sum(chunk^2) / sum(chunk) = 256 / 16), not half of them. Per layer:
  // attention at (16, 0, 0, 0), a profiled point, 8.128; the dense layers at 16 tokens
  // (2 x layernorm 2.14933 + qkv 14.0053 + qk_norm 2.01067 + rotary 2.51733 + o_proj 9.89867);
  // the experts at the 16 tokens, 64 (1 - (120/128)^16) = 41.2 a GPU, between the 32- and
  // 64-expert rows at 16 tokens (229.664, 424.116). Once: embedding 6.613 + final norm 2.112 at
  // 16 tokens, lm_head 420.224 + sampler 10.1227 at 1 sequence. The link: 2 x 10 us + 2 (2-1)/2
  // x 16 x 1,000 x 2 bytes at 1e6 bytes/ms a layer.
  const auto dp = moe_model(
      "data_parallel: 2\nhidden_size: 1000\nlink_gb_per_s: 1\n"
      "link_latency_us: 10\n");
  StepShape one;
  one.sequences = 1;
  one.prefill_tokens = 16;
  one.prefill_tokens_sq = 256;
  const double experts = 64 * (1 - std::pow(120.0 / 128, 16));
  const double moe = 229.664 + (experts - 32) / 32 * (424.116 - 229.664);
  const double dense = 2 * 2.14933 + 14.0053 + 2.01067 + 2.51733 + 9.89867;
  const double comm_ms = 2 * (0.02 + 32000.0 / 1e6);
  CHECK(dp->step_ms(one) ==
        Approx((2 * (8.128 + dense + moe) + 6.613 + 2.112 + 420.224 + 10.1227) / 1000 + comm_ms)
            .epsilon(1e-9));
  // Two requests' chunks of 8 go one to each rank: each computes 8, and the step is faster.
  StepShape two = one;
  two.sequences = 2;
  two.prefill_tokens_sq = 2 * 64;
  CHECK(dp->step_ms(two) < dp->step_ms(one));
}

TEST_CASE("layer_profile: mixture-of-experts settings and profiles are checked", "[models]") {
  CHECK_THROWS_WITH(moe_model("experts_per_token: 200\n"),
                    Catch::Contains("experts_per_token = \"200\"") &&
                        Catch::Contains("must be <= experts (128)"));
  CHECK_THROWS_WITH(model("experts: 64\n"),
                    Catch::Contains("only for a mixture-of-experts profile"));
  CHECK_THROWS_WITH(model("data_parallel: 2\nhidden_size: 1000\nlink_gb_per_s: 1\n"),
                    Catch::Contains("a mixture of experts only"));
  const auto dir = temp_dir();
  for (const char* f : {"attention.csv", "per_sequence.csv", "dense.csv"})
    std::filesystem::copy_file(k_dir + "/" + f, dir / f);
  std::ofstream(dir / "dense.csv", std::ios::app) << "shared_expert,1,3.0\n";
  CHECK_THROWS_WITH(LayerProfile(dir.string(), 2),
                    Catch::Contains("layer \"shared_expert\" is not one a step is composed of"));
  std::filesystem::copy_file(k_moe + "/tp1/moe.csv", dir / "moe.csv");
  CHECK_THROWS_WITH(LayerProfile(dir.string(), 2), Catch::Contains("beside moe.csv"));
  // A tpN folder of a mixture of experts with no moe.csv near it: the MLP is missing.
  const auto tp2 = temp_dir() / "tp2";
  std::filesystem::create_directories(tp2);
  for (const char* f : {"attention.csv", "per_sequence.csv", "dense.csv"})
    std::filesystem::copy_file(k_moe + "/tp2/" + f, tp2 / f);
  CHECK_THROWS_WITH(
      LayerProfile(tp2.string(), 2),
      Catch::Contains("\"gate_up_proj\"") && Catch::Contains("needs moe.csv here or in ../tp1"));
}

TEST_CASE("measurements: a mixture of experts composes into whole steps", "[models][fit]") {
  MeasurementFilter f;
  f.layers = 2;
  const MeasurementSet set = read_layer_profile(k_moe + "/tp1", f);
  REQUIRE(set.samples.size() == 9);
  CHECK(set.samples[0].ms ==
        Approx((2 * (7.69067 + k_moe_layer1 + 50.2297) + k_moe_once1) / 1000).epsilon(1e-12));
  CHECK_THAT(set.description, Catch::Contains("8 of 128 experts per token"));
}

namespace {

// A tiny skew table (columns as the profiler writes them, with some it has that servesim does not
// read), hand-worked below; g = t_max - t_mean, e = t_skew - t_mean, a cell's alpha sum(g e) /
// sum(g^2). Pure decode (pc 0): cell (n 2, share 1/2, kv_big 1024) g 10, e 2: 0.2; cell (n 4,
// share 1/4, kv_big 1024) g 10, e 5: 0.5. Beside a 16-token chunk: (n 2, 1/2, 1024) g 20, e 6:
// 0.3. Pooled per chunk: pc 0 (20 + 50) / 200 = 0.35, pc 16 0.3; over all rows 190 / 600.
const char* k_skew_csv =
    "regime,n,nb,ratio,skew,pc,kp,kvs,kv_big,kv_mean,t_mean_us,t_max_us,t_skew_us,alpha\n"
    "pure,2,1,0.5,4.0,0,0,256,1024,640,100,110,102,0.2\n"
    "mixed,2,1,0.5,4.0,16,0,256,1024,640,200,220,206,0.3\n"
    "pure,4,1,0.25,4.0,0,0,256,1024,448,50,60,55,\n";

std::string folder_with_skew(const std::string& skew_csv) {
  const auto root = temp_dir();
  for (const char* f : {"attention.csv", "dense.csv", "per_sequence.csv"})
    std::filesystem::copy_file(std::filesystem::path(k_dir) / f, root / f);
  std::ofstream(root / "skew.csv") << skew_csv;
  return root.string();
}

}  // namespace

TEST_CASE("layer_profile: the skew fit is least squares per cell, multilinear between them",
          "[models]") {
  const std::string dir = folder_with_skew(k_skew_csv);
  const SkewFit fit(SkewFit::read(dir + "/skew.csv"));
  CHECK(fit.cells() == 3);
  CHECK(fit.alpha(0, 2, 0.5, 1024) == Approx(0.2).epsilon(1e-12));
  CHECK(fit.alpha(0, 4, 0.25, 1024) == Approx(0.5).epsilon(1e-12));
  CHECK(fit.alpha(16, 2, 0.5, 1024) == Approx(0.3).epsilon(1e-12));
  CHECK(fit.pooled() == Approx(190.0 / 600).epsilon(1e-12));
  // Halfway in log n (2 sqrt 2) and in share (3/8): of the four corners only (2, 1/2) and
  // (4, 1/4) were profiled, weighing 1/4 each: renormalised, their mean.
  CHECK(fit.alpha(0, 2 * std::sqrt(2.0), 0.375, 1024) == Approx((0.2 + 0.5) / 2).epsilon(1e-12));
  // A chunk is never interpolated towards pure decode: 8 tokens clamp to the 16-token chunk.
  CHECK(fit.alpha(8, 2, 0.5, 1024) == Approx(0.3).epsilon(1e-12));
  CHECK(fit.alpha(1, 2, 0.5, 1024) == Approx(0.3).epsilon(1e-12));  // one token is a chunk too
  CHECK(fit.alpha(4096, 2, 0.5, 1024) == Approx(0.3).epsilon(1e-12));
  // Beyond the grid: clamped to its edges (n 4, share 1/4, kv_big 1024).
  CHECK(fit.alpha(0, 100, 0.01, 1e6) == Approx(0.5).epsilon(1e-12));
  // No profiled corner: the chunk's pooled alpha.
  CHECK(fit.alpha(0, 4, 0.5, 1024) == Approx(0.35).epsilon(1e-12));
  CHECK(fit.alpha(16, 4, 0.25, 1024) == Approx(0.3).epsilon(1e-12));
}

TEST_CASE("layer_profile: skew: fit charges a step's uneven decodes the fitted alpha", "[models]") {
  // Two decodes at 16 and 1,024, no prefill: mean 520, share at the longest (520 - 16) / (1024 -
  // 16) = 1/2, n 2, longest 1,024: alpha 0.2 of the gap from the mean's attention to the longest's.
  const double mean = 12.5653 + 0.5 * (20.6177 - 12.5653);
  const double gap = 20.6177 - mean;
  const StepShape s = two_uneven_decodes();
  const std::string dir = folder_with_skew(k_skew_csv);
  const auto at = [&](const std::string& extra) {
    return make_step_time_model(
        Cfg::root(doc_of("kind: layer_profile\npath: " + dir + "\nlayers: 2\n" + extra)));
  };
  const double base = at("")->step_ms(s);
  CHECK(at("skew: none\n")->step_ms(s) == Approx(base).epsilon(1e-12));
  CHECK(at("skew: fit\n")->step_ms(s) == Approx(base + 2 * 0.2 * gap / 1000).epsilon(1e-12));
  StepShape even = s;
  even.decode_context_tokens = 2 * 520;
  even.decode_context_min = even.decode_context_max = 520;
  CHECK(at("skew: fit\n")->step_ms(even) == Approx(at("")->step_ms(even)).epsilon(1e-12));
  CHECK_THROWS_WITH(at("skew: fit\nskew_alpha: 0.1\n"), Catch::Contains("skew_alpha"));
  CHECK_THROWS_WITH(at("skew: maybe\n"), Catch::Contains("skew") && Catch::Contains("fit"));
  // A folder without skew.csv: refused, naming the file.
  CHECK_THROWS_WITH(model("skew: fit\n"), Catch::Contains("skew.csv"));
}

TEST_CASE("layer_profile: a malformed skew.csv is refused with its file, line and column",
          "[models]") {
  const std::string header = "pc,n,nb,kvs,kv_big,t_mean_us,t_max_us,t_skew_us\n";
  const std::string ok = "0,2,1,256,1024,100,110,102\n";
  const struct {
    std::string row, column;
  } cases[] = {{"0,2,3,256,1024,100,110,102\n", "nb"},     // more long decodes than decodes
               {"0,2,1,256,256,100,110,102\n", "kv_big"},  // not above kvs
               {"0,2,1,256,1024,100,110,\n", "t_skew_us"},
               {"0,2,1,256,1024,100,abc,102\n", "t_max_us"},
               {"-16,2,1,256,1024,100,110,102\n", "pc"}};
  for (const auto& c : cases) {
    const std::string dir = folder_with_skew(header + ok + c.row);
    CHECK_THROWS_WITH(SkewFit::read(dir + "/skew.csv"),
                      Catch::Contains("skew.csv:3") && Catch::Contains("column " + c.column));
  }
  CHECK_THROWS_WITH(
      SkewFit::read(folder_with_skew("pc,n,nb,kvs,kv_big,t_mean_us,t_max_us\n") + "/skew.csv"),
      Catch::Contains("t_skew_us"));
}

TEST_CASE(
    "layer_profile: with no profiled corner, the nearest row wins and a tie goes to the "
    "first row of the file",
    "[models]") {
  // Two decode rows: A (1 decode at KV 15) 10 us and B (3 decodes at KV 23) 30 us. At 3 decodes
  // and KV 15 the only corner with weight, (3, 15), was not profiled; both rows are at relative
  // distance 0.25 ((1 - 3) / (1 + 3) = -0.5 along n; (23 - 15) / (1 + 15) = 0.5 along KV).
  const auto dir = temp_dir();
  for (const char* f : {"dense.csv", "per_sequence.csv"})
    std::filesystem::copy_file(std::filesystem::path(k_dir) / f, dir / f);
  const auto write = [&](const std::string& rows) {
    std::ofstream(dir / "attention.csv", std::ios::trunc)
        << "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n"
        << rows;
    return LayerProfile(dir.string(), 2);
  };
  CHECK(write("0,0,1,15,10\n0,0,3,23,30\n").attention_us(0, 0, 3, 15) == 10);
  CHECK(write("0,0,3,23,30\n0,0,1,15,10\n").attention_us(0, 0, 3, 15) == 30);
  // Without the tie the nearer row wins whatever the order: B at KV 19 is 0.0625 away.
  CHECK(write("0,0,1,15,10\n0,0,3,19,30\n").attention_us(0, 0, 3, 15) == 30);
  // Decode batches up to 2^24 are read; one more is refused, naming the file, line and column.
  CHECK(write("0,0,16777216,15,10\n").attention_us(0, 0, 1, 15) == 10);
  CHECK_THROWS_WITH(write("0,0,16777217,15,10\n"),
                    Catch::Contains("attention.csv:2: column n_decode = \"16777217\""));
}

TEST_CASE("layer_profile: a skew fit of pure decodes alone answers for mixed batches too",
          "[models]") {
  // Only pure-decode rows (prefill chunk 0): cells (n 2, share 1/2) alpha 0.2 and (n 4, share
  // 1/4) alpha 0.5 (see k_skew_csv). A batch with a prefill chunk has no chunk of its own to
  // interpolate among, so it takes the pure-decode cells.
  const std::string header = "pc,n,nb,kvs,kv_big,t_mean_us,t_max_us,t_skew_us\n";
  const std::string dir =
      folder_with_skew(header + "0,2,1,256,1024,100,110,102\n0,4,1,256,1024,50,60,55\n");
  const SkewFit fit(SkewFit::read(dir + "/skew.csv"));
  CHECK(fit.alpha(16, 2, 0.5, 1024) == Approx(0.2).epsilon(1e-12));
  CHECK(fit.alpha(512, 4, 0.25, 1024) == Approx(0.5).epsilon(1e-12));
  CHECK(fit.alpha(0, 4, 0.25, 1024) == Approx(0.5).epsilon(1e-12));
}

}  // namespace t_models_layer_profile_test
