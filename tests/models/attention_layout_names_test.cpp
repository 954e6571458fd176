// The layouts an attention table's refusal names (models/operator_table_readers.cpp,
// read_attention_rows): every (query heads, KV heads, head_dim) the file holds, each once, even
// when a layout's head_dim equals the previous layout's head count, or its first row's batch the
// previous layout's KV heads.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "models/operator_table_readers.h"
#include "tests/support.h"

namespace t_models_attention_layout_names_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("attention tables: a refusal names every layout the file has", "[models]") {
  // 128 query / 8 KV heads of dimension 64, then of dimension 128: the second layout's head_dim
  // is the first's head count.
  const std::string file = write_temp("context_attention.csv",
                                      "head_dim,num_heads,num_key_value_heads,batch_size,isl,step,"
                                      "latency_ms_x\n"
                                      "64,128,8,1,16,0,0.01\n64,128,8,2,16,0,0.02\n"
                                      "128,128,8,1,16,0,0.03\n128,128,8,2,16,0,0.04\n"
                                      "128,128,16,1,16,0,0.05\n");
  Breakpoints bp;
  std::string message = "(no error)";
  try {
    (void)read_attention_table(file, false, AttentionHeads{4, 2, 32}, "x", bp);
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains("no rows for 4 query / 2 KV heads of dimension 32 per GPU "
                                      "(query/KV heads x head_dim there: 128/16 heads x 128, "
                                      "128/8 heads x 128, 128/8 heads x 64)"));
}

TEST_CASE("attention tables: a layout that differs only in KV heads is named whatever its batch",
          "[models]") {
  // The second layout differs from the first in its KV heads alone, and its first row's
  // batch_size (8) is the text of the first layout's KV heads: it must still be named.
  const std::string file = write_temp("generation_attention.csv",
                                      "head_dim,num_heads,num_key_value_heads,batch_size,isl,step,"
                                      "latency_ms_x\n"
                                      "128,32,8,1,1,16,0.01\n128,32,16,8,1,16,0.02\n");
  Breakpoints bp;
  std::string message = "(no error)";
  try {
    (void)read_attention_table(file, true, AttentionHeads{4, 2, 32}, "x", bp);
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains("(query/KV heads x head_dim there: 32/16 heads x 128, "
                                      "32/8 heads x 128)"));
}

}  // namespace t_models_attention_layout_names_test
