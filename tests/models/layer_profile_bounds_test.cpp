// layer_profile's setting ranges at their ends (models/layer_profile.cpp) and the generic
// measurement file's (models/measurements.cpp). The largest
// data_parallel accepted is 1,024; one more is refused with the range.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "models/measurements.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_layer_profile_bounds_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::unique_ptr<StepTimeModel> moe_model(const std::string& dp) {
  return make_step_time_model(
      Cfg::root(doc_of("kind: layer_profile\npath: " + std::string(SERVESIM_SOURCE_DIR) +
                       "/tests/data/llmservingsim-moe/tp1\nlayers: 2\ndata_parallel: " + dp +
                       "\nhidden_size: 1000\nlink_gb_per_s: 1\nlink_latency_us: 10\n")));
}

}  // namespace

TEST_CASE("layer_profile: data_parallel 1024 is accepted, 1025 refused", "[models]") {
  CHECK_NOTHROW(moe_model("1024"));
  CHECK_THROWS_AS(moe_model("1025"), InputError);
  CHECK_THROWS_WITH(moe_model("1025"), Catch::Contains("data_parallel"));
}

TEST_CASE("layer_profile: hidden_size 2^24 is accepted, one more refused", "[models]") {
  const auto tp2 = [](const std::string& hidden) {
    return make_step_time_model(Cfg::root(doc_of(
        "kind: layer_profile\npath: " + std::string(SERVESIM_SOURCE_DIR) +
        "/tests/data/llmservingsim-tp1\nlayers: 2\ntensor_parallel: 2\nhidden_size: " + hidden +
        "\nlink_gb_per_s: 1\nlink_latency_us: 10\n")));
  };
  CHECK_NOTHROW(tp2("16777216"));
  CHECK_THROWS_WITH(tp2("16777217"), Catch::Contains("hidden_size") &&
                                         Catch::Contains("must be an integer from 1 to 16777216"));
}

TEST_CASE("measurements: a prefill-only step has no decode context (0 is allowed)", "[models]") {
  const std::string path = write_temp("steps.csv",
                                      "batch_size,context_tokens,prefill_tokens,step_ms\n"
                                      "1,0,128,20\n4,4096,0,12\n");
  const MeasurementSet set = read_generic_measurements(path);
  REQUIRE(set.samples.size() == 2);
  CHECK(set.samples[0].shape.sequences == 1);
  CHECK(set.samples[0].shape.decode_sequences == 0);
  CHECK(set.samples[0].shape.decode_context_tokens == 0);
  CHECK(set.samples[0].shape.prefill_tokens == 128);
  CHECK(set.samples[1].shape.decode_sequences == 4);
  CHECK_THROWS_WITH(read_generic_measurements(write_temp(
                        "neg.csv", "batch_size,context_tokens,prefill_tokens,step_ms\n1,-1,0,5\n")),
                    Catch::Contains("neg.csv:2"));
}

}  // namespace t_models_layer_profile_bounds_test
