// layer_profile's setting ranges at their ends (models/layer_profile.cpp): the largest
// data_parallel accepted is 1,024; one more is refused with the range.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "models/step_time_model.h"
#include "tests/support.h"

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
