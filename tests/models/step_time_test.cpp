#include <catch2/catch.hpp>

#include "core/errors.h"
#include "models/step_time_model.h"
#include "tests/support.h"

namespace t_models_step_time_test {

using namespace servesim;
using namespace servesim::test;

namespace {
std::unique_ptr<StepTimeModel> model(const std::string& yaml) {
  return make_step_time_model(Cfg::root(doc_of(yaml)));
}
StepShape decode(int seqs, int64_t context = 0) {
  StepShape s;
  s.sequences = s.decode_sequences = seqs;
  s.decode_context_tokens = context;
  return s;
}
}  // namespace

TEST_CASE("table: interpolates linearly and holds flat beyond the ends", "[models]") {
  auto m = model(
      "kind: table\npoints: [{batch: 2, ms: 10}, {batch: 6, ms: 18}]\n"
      "prefill_ms_per_token: 0.5\n");
  CHECK(m->step_ms(decode(1)) == 10.0);
  CHECK(m->step_ms(decode(2)) == 10.0);
  CHECK(m->step_ms(decode(3)) == 12.0);
  CHECK(m->step_ms(decode(6)) == 18.0);
  CHECK(m->step_ms(decode(100)) == 18.0);
  StepShape p = decode(1);
  p.prefill_tokens = 10;
  CHECK(m->step_ms(p) == 15.0);
}

TEST_CASE("table: loads measured points from a CSV file", "[models]") {
  const std::string path = write_temp("pts.csv", "ms,batch,note\n6.3,1,a\n9.3,8,b\n");
  auto m = model("kind: table\npoints_file: " + path + "\n");
  CHECK(m->step_ms(decode(1)) == Approx(6.3));
  CHECK(m->step_ms(decode(8)) == Approx(9.3));
  CHECK(m->step_ms(decode(4)) == Approx(6.3 + 3.0 * 3.0 / 7.0));
  const std::string bad = write_temp("bad.csv", "batch,ms\n8,9.3\n1,6.3\n");
  CHECK_THROWS_WITH(model("kind: table\npoints_file: " + bad + "\n"),
                    Catch::Contains(":3: batch 1 after batch 8"));
}

TEST_CASE("linear: every coefficient multiplies its term", "[models]") {
  auto m = model(
      "kind: linear\nbase_ms: 1\nper_seq_ms: 2\nper_context_token_ms: 0.01\n"
      "per_prefill_token_ms: 0.1\nper_prefill_token_sq_ms: 0.001\n");
  StepShape s = decode(3, 1000);
  s.sequences = 4;
  s.prefill_tokens = 100;
  s.prefill_tokens_sq = 100.0 * 100.0;
  CHECK(m->step_ms(s) == Approx(1 + 2 * 4 + 0.01 * 1000 + 0.1 * 100 + 0.001 * 10000));
}

TEST_CASE("linear: a model whose step could take no time is refused", "[models]") {
  CHECK_THROWS_WITH(model("kind: linear\nper_context_token_ms: 1\n"),
                    Catch::Contains("base_ms + per_seq_ms must be > 0"));
}

}  // namespace t_models_step_time_test
