// Vidur's tables (--input-format vidur) written from scratch with only the columns the reader
// takes, so that each optional column can be left out, left empty or filled, and each spelling
// of is_prefill tried (docs/testing.md, "Fifth round: the step models"). One layer, TP 1 (no
// all_reduce.csv), one shape: n_embd 64, 4 heads, 4 KV heads, MLP 128.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/errors.h"
#include "models/measurements.h"
#include "tests/support.h"

namespace t_models_vidur_columns_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const char* const k_required[] = {"attn_pre_proj", "attn_rope", "attn_post_proj",
                                  "mlp_up_proj",   "mlp_act",   "mlp_down_proj"};
const char* const k_optional[] = {"input_layernorm", "post_attention_layernorm", "add"};

std::string median(const std::string& op) { return "time_stats." + op + ".median"; }

/// mlp.csv of one shape at 8 and 16 tokens: each required operator 0.1 ms at 8 tokens and 0.2 ms
/// at 16 (0.6 and 1.2 ms a layer). `opt` names the optional column written (none when empty)
/// and `opt_cell` its cell on both rows.
std::string mlp_csv(const std::string& opt = "", const std::string& opt_cell = "") {
  std::string s = "n_embd,n_head,n_kv_head,n_expanded_embd,num_tensor_parallel_workers,num_tokens";
  for (const char* op : k_required) s += "," + median(op);
  if (!opt.empty()) s += "," + median(opt);
  s += "\n";
  for (const auto& [tokens, ms] : {std::pair{8, "0.1"}, std::pair{16, "0.2"}}) {
    s += fmt::format("64,4,4,128,1,{}", tokens);
    for (size_t i = 0; i < std::size(k_required); ++i) s += fmt::format(",{}", ms);
    if (!opt.empty()) s += "," + opt_cell;
    s += "\n";
  }
  return s;
}

const std::string k_attn_header =
    "n_embd,n_q_head,n_kv_head,num_tensor_parallel_workers,is_prefill,batch_size,"
    "prefill_chunk_size,kv_cache_size,time_stats.attn_prefill.median,"
    "time_stats.attn_decode.median";

/// An attention row of the shape: a prefill of `chunk` tokens (3 ms) or `batch` decodes at KV
/// `kv` (2 ms).
std::string attn_row(const std::string& is_prefill, int batch, int chunk, int kv) {
  return fmt::format("64,4,4,1,{},{},{},{},3,2", is_prefill, batch, chunk, kv);
}

fs::path tables(const std::string& mlp, const std::string& attention) {
  const fs::path d = temp_dir();
  std::ofstream(d / "mlp.csv") << mlp;
  std::ofstream(d / "attention.csv") << attention;
  return d;
}

MeasurementSet read(const fs::path& d) {
  MeasurementFilter f;
  f.layers = 1;
  return read_vidur_tables(d.string(), f);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("vidur columns: every spelling of is_prefill is read, and no other", "[models][vidur]") {
  for (const char* yes : {"True", "true", "1"}) {
    INFO(yes);
    const auto set = read(tables(mlp_csv(), k_attn_header + "\n" + attn_row(yes, 1, 8, 0) + "\n"));
    REQUIRE(set.samples.size() == 1);
    CHECK(set.samples[0].shape.prefill_tokens == 8);
    CHECK(set.samples[0].ms == Approx(3 + 0.6).epsilon(1e-12));
  }
  for (const char* no : {"False", "false", "0"}) {
    INFO(no);
    const auto set = read(tables(mlp_csv(), k_attn_header + "\n" + attn_row(no, 8, 0, 10) + "\n"));
    REQUIRE(set.samples.size() == 1);
    CHECK(set.samples[0].shape.prefill_tokens == 0);
    CHECK(set.samples[0].shape.decode_sequences == 8);
    CHECK(set.samples[0].shape.decode_context_tokens == 8 * 11);
    CHECK(set.samples[0].ms == Approx(2 + 0.6).epsilon(1e-12));
  }
  for (const char* bad : {"yes", "TRUE", "2", ""}) {
    INFO(bad);
    const fs::path d = tables(mlp_csv(), k_attn_header + "\n" + attn_row(bad, 8, 0, 10) + "\n");
    CHECK_THAT(message_of([&] { (void)read(d); }),
               Catch::EndsWith(fmt::format("attention.csv:2: column is_prefill = \"{}\": must be "
                                           "True or False",
                                           bad)));
  }
}

TEST_CASE("vidur columns: an optional operator column left out or empty counts 0 ms",
          "[models][vidur]") {
  const std::string attn = k_attn_header + "\n" + attn_row("False", 8, 0, 10) + "\n";
  // Without any optional column, 8 decodes are 2 ms of attention and 0.6 ms of operators.
  CHECK(read(tables(mlp_csv(), attn)).samples.at(0).ms == Approx(2.6).epsilon(1e-12));
  for (const char* op : k_optional) {
    INFO(op);
    CHECK(read(tables(mlp_csv(op, ""), attn)).samples.at(0).ms == Approx(2.6).epsilon(1e-12));
    CHECK(read(tables(mlp_csv(op, "0.25"), attn)).samples.at(0).ms == Approx(2.85).epsilon(1e-12));
  }
  // attn_kv_cache_save, attention.csv's optional column: added to either kind of row.
  const std::string save_header = k_attn_header + ",time_stats.attn_kv_cache_save.median\n";
  const auto with_save = [&](const std::string& cell) {
    return read(tables(mlp_csv(), save_header + attn_row("False", 8, 0, 10) + "," + cell + "\n" +
                                      attn_row("True", 1, 16, 0) + "," + cell + "\n"));
  };
  const auto empty = with_save("");
  REQUIRE(empty.samples.size() == 2);
  CHECK(empty.samples[0].ms == Approx(2.6).epsilon(1e-12));  // the decodes
  CHECK(empty.samples[1].ms == Approx(4.2).epsilon(1e-12));  // the prefill of 16: 3 + 1.2
  const auto filled = with_save("0.5");
  CHECK(filled.samples[0].ms == Approx(3.1).epsilon(1e-12));
  CHECK(filled.samples[1].ms == Approx(4.7).epsilon(1e-12));
}

TEST_CASE("vidur columns: token counts round up to 8 before the operator curve is read",
          "[models][vidur]") {
  // Decodes of 1 to 8 sequences read the 8-token row, 9 to 16 the 16-token row; a prefill of
  // 9 tokens reads 16, one of 17 reads 24, past the table's end, along its last segment (1.8 ms).
  std::string attn = k_attn_header + "\n";
  for (int b : {1, 8, 9, 16}) attn += attn_row("False", b, 0, 4) + "\n";
  for (int c : {8, 9, 17}) attn += attn_row("True", 1, c, 0) + "\n";
  const auto set = read(tables(mlp_csv(), attn));
  REQUIRE(set.samples.size() == 7);
  // In key order: decodes by batch, then prefills by chunk.
  const double want[] = {2.6, 2.6, 3.2, 3.2, 3.6, 4.2, 4.8};
  for (size_t i = 0; i < set.samples.size(); ++i) {
    INFO(set.samples[i].label);
    CHECK(set.samples[i].ms == Approx(want[i]).epsilon(1e-12));
  }
  CHECK_THAT(set.description,
             Catch::Contains("7 steps (3 prefill, 4 decode)") &&
                 Catch::Contains("(0 chunk-continuation rows skipped, 0 repeated"));
}

TEST_CASE("vidur columns: a prefill must be one prompt of some tokens, a decode no chunk",
          "[models][vidur]") {
  struct Bad {
    const char* row_kind;
    int batch, chunk;
  };
  for (const Bad b : {Bad{"True", 1, 0}, Bad{"True", 2, 8}, Bad{"False", 4, 1}}) {
    INFO(b.row_kind << " " << b.batch << " " << b.chunk);
    const std::string kind = b.row_kind[0] == 'T' ? "prefill" : "decode";
    const fs::path d = tables(mlp_csv(), k_attn_header + "\n" + attn_row("False", 1, 0, 4) + "\n" +
                                             attn_row(b.row_kind, b.batch, b.chunk, 0) + "\n");
    CHECK_THAT(message_of([&] { (void)read(d); }),
               Catch::Contains(fmt::format("attention.csv:3: a {} row with batch_size {} and "
                                           "prefill_chunk_size {}: Vidur profiles one prompt",
                                           kind, b.batch, b.chunk)));
  }
  // A repeated key is averaged and counted; rows of chunk continuations are counted and skipped.
  const auto set =
      read(tables(mlp_csv(), k_attn_header + "\n" + attn_row("False", 1, 0, 4) + "\n" +
                                 attn_row("True", 1, 8, 4) + "\n" + attn_row("True", 1, 8, 6) +
                                 "\n" + "64,4,4,1,False,1,0,4,3,4\n"));
  REQUIRE(set.samples.size() == 1);
  CHECK(set.samples[0].ms == Approx(3 + 0.6).epsilon(1e-12));
  CHECK_THAT(set.description, Catch::Contains("(2 chunk-continuation rows skipped, 1 repeated"));
  // Only rows with no work at all are refused: no rows of the shape at all.
  CHECK_THAT(message_of([&] {
               (void)read(tables(mlp_csv(), k_attn_header + "\n" + attn_row("True", 1, 8, 4)));
             }),
             Catch::Contains("attention.csv: no rows for n_embd 64, 4 heads, 4 KV heads, MLP 128, "
                             "TP 1 (without a stored prefix)"));
}

TEST_CASE("vidur columns: attention rows of another shape or TP degree are passed over",
          "[models][vidur]") {
  // Each row differs from the chosen shape in one column (n_embd, n_q_head, n_kv_head, TP) and
  // says 999 ms; none may reach a step.
  std::string attn = k_attn_header + "\n" + attn_row("False", 1, 0, 4) + "\n";
  for (const char* other : {"65,4,4,1", "64,5,4,1", "64,4,5,1", "64,4,4,2"})
    attn += fmt::format("{},False,1,0,4,999,999\n", other);
  const auto set = read(tables(mlp_csv(), attn));
  REQUIRE(set.samples.size() == 1);
  CHECK(set.samples[0].ms == Approx(2.6).epsilon(1e-12));
  CHECK_THAT(set.description, Catch::Contains("0 repeated"));
}

}  // namespace t_models_vidur_columns_test
