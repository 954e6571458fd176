// Attention for head layouts the tables did not measure (models/operator_table_readers.h,
// attention_substitute): a layout is answered by the measured one with the same head_dim and
// group size (query heads per KV head) and the most KV heads dividing its own, at the batch
// times the ratio of KV heads. tests/data/aic-tiny measures 2/1 and 4/2 heads of 64 (group 2):
//   context     0.00025 x heads x batch x (isl / 16)^2
//   generation  0.000025 x heads x batch x kv
// so a substituted layout must give exactly its own heads' figure.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>

#include "core/errors.h"
#include "models/operator_table_readers.h"
#include "models/operator_tables.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_attention_layouts_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_dir = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";
const std::string k_bf = "bfloat16";

Approx near(double v) { return Approx(v).epsilon(1e-4); }

std::unique_ptr<OperatorSource> tiny() {
  return open_operator_tables({k_dir, "tiny_gpu", "vllm", false});
}

}  // namespace

TEST_CASE("attention layouts: a measured layout is read as it is", "[models]") {
  const auto src = tiny();
  CHECK(src->generation_attention_ms(3, 64, {4, 2, 64}, k_bf, k_bf) == near(0.000025 * 4 * 3 * 64));
  const auto sub =
      attention_substitute(k_dir + "/tiny_gpu/vllm-0.1.0/generation_attention.csv", {4, 2, 64});
  REQUIRE(sub);
  CHECK(sub->batch_scale == 1);
  CHECK(sub->heads.kv_heads == 2);
}

TEST_CASE("attention layouts: an unmeasured layout takes the same group size at a larger batch",
          "[models]") {
  const auto src = tiny();
  // 8 query / 4 KV heads (group 2): the 4/2 rows at twice the batch, the most KV heads that
  // divide 4 (2/1 would also divide, at four times the batch).
  const std::string gen = k_dir + "/tiny_gpu/vllm-0.1.0/generation_attention.csv";
  const auto sub = attention_substitute(gen, {8, 4, 64});
  REQUIRE(sub);
  CHECK(sub->heads.heads == 4);
  CHECK(sub->heads.kv_heads == 2);
  CHECK(sub->batch_scale == 2);
  CHECK(src->generation_attention_ms(3, 64, {8, 4, 64}, k_bf, k_bf) == near(0.000025 * 8 * 3 * 64));
  CHECK(src->context_attention_ms(1, 64, {8, 4, 64}, k_bf, k_bf) == near(0.00025 * 8 * 1 * 16));
  // 6 / 3 (group 2): 2 does not divide 3, so the 2/1 rows at three times the batch.
  const auto odd = attention_substitute(gen, {6, 3, 64});
  REQUIRE(odd);
  CHECK(odd->heads.kv_heads == 1);
  CHECK(odd->batch_scale == 3);
  CHECK(src->generation_attention_ms(2, 64, {6, 3, 64}, k_bf, k_bf) == near(0.000025 * 6 * 2 * 64));
}

TEST_CASE("attention layouts: no layout of the same group size is refused, naming the layouts",
          "[models]") {
  const auto src = tiny();
  // Multi-head (group 1): the tiny tables measured group 2 only.
  CHECK_FALSE(
      attention_substitute(k_dir + "/tiny_gpu/vllm-0.1.0/generation_attention.csv", {4, 4, 64}));
  std::string msg = "(no error)";
  try {
    (void)src->generation_attention_ms(1, 64, {4, 4, 64}, k_bf, k_bf);
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::Contains("no rows for 4 query / 4 KV heads") &&
                      Catch::Contains("2/1 heads x 64"));
  // Another head_dim, or a group size that is not whole, has no substitute either.
  CHECK_FALSE(
      attention_substitute(k_dir + "/tiny_gpu/vllm-0.1.0/generation_attention.csv", {4, 2, 128}));
  CHECK_FALSE(
      attention_substitute(k_dir + "/tiny_gpu/vllm-0.1.0/generation_attention.csv", {3, 2, 64}));
}

TEST_CASE("attention layouts: an unmeasured group size is blended between measured ones",
          "[models]") {
  // Groups 2 and 4 at one KV head, each linear in the query heads: group 3 lies half way.
  std::string rows =
      "head_dim,num_heads,num_key_value_heads,window_size,batch_size,isl,step,"
      "latency_ms_bfloat16_kv_bfloat16\n";
  for (int heads : {2, 4})
    for (int batch : {1, 2, 4})
      for (int step : {15, 63})
        rows += fmt::format("64,{},1,0,{},1,{},{}\n", heads, batch, step,
                            0.000025 * heads * batch * (step + 1));
  const std::string file = write_temp("generation_attention.csv", rows);
  const auto sub = attention_substitute(file, {3, 1, 64});
  REQUIRE(sub);
  CHECK(sub->heads.heads == 2);
  REQUIRE(sub->upper);
  CHECK(sub->upper->heads == 4);
  CHECK(sub->upper_weight == near(0.5));
  Breakpoints bp;
  const AttentionTable t = read_attention_blend(file, true, *sub, k_bf + "_kv_" + k_bf, bp);
  REQUIRE(t.by_batch.size() == 2);
  CHECK(t.by_batch[1].at(2) == near(0.000025 * 3 * 2 * 64));
  // 6 query / 2 KV heads (group 3): the same blend at twice the batch.
  const auto wide = attention_substitute(file, {6, 2, 64});
  REQUIRE(wide);
  CHECK(wide->batch_scale == 2);
  CHECK(wide->upper_weight == near(0.5));
  // Group 5 lies above every measured group: nothing to blend, refused.
  CHECK_FALSE(attention_substitute(file, {5, 1, 64}));
}

TEST_CASE("attention layouts: one source asked for layouts and kinds in turn answers each",
          "[models]") {
  // The source keeps the last table of each kind found: asking for another layout, the other
  // kind or back again must still give each one's own figure.
  const auto src = tiny();
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    CHECK(src->generation_attention_ms(3, 64, {4, 2, 64}, k_bf, k_bf) ==
          near(0.000025 * 4 * 3 * 64));
    CHECK(src->context_attention_ms(1, 64, {4, 2, 64}, k_bf, k_bf) == near(0.00025 * 4 * 1 * 16));
    CHECK(src->generation_attention_ms(3, 64, {8, 4, 64}, k_bf, k_bf) ==
          near(0.000025 * 8 * 3 * 64));
    CHECK(src->generation_attention_ms(2, 64, {2, 1, 64}, k_bf, k_bf) ==
          near(0.000025 * 2 * 2 * 64));
    CHECK(src->context_attention_ms(1, 64, {8, 4, 64}, k_bf, k_bf) == near(0.00025 * 8 * 1 * 16));
  }
}

}  // namespace t_models_attention_layouts_test
