// kind: layer_profile on an excerpt of real vLLM layer profiles (tests/data/llmservingsim-tp1).
#include <catch2/catch.hpp>

#include "models/layer_profile.h"
#include "models/step_time_model.h"
#include "tests/support.h"

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
  const auto tp = model("tensor_parallel: 2\nhidden_size: 1000\nlink_gb_per_s: 1\nlink_latency_us: 10\n");
  CHECK(tp->step_ms(one_decode(16)) == Approx(base + 4 * 0.012).epsilon(1e-12));
  CHECK(model("overhead_ms: 1.5\n")->step_ms(one_decode(16)) == Approx(base + 1.5).epsilon(1e-12));
}

TEST_CASE("layer_profile: bad settings are named", "[models]") {
  CHECK_THROWS_WITH(make_step_time_model(Cfg::root(doc_of("kind: layer_profile\npath: /nonexistent\nlayers: 2\n"))),
                    Catch::Contains("path = \"/nonexistent\" at test.yaml:2:7: no such profile folder"));
  CHECK_THROWS_WITH(model("tensor_parallel: 2\n"), Catch::Contains("hidden_size: required key missing"));
}
