// run_cost_json (sizing/run_cost.h) with counts of exactly 1: slo.accelerators of 1 is the
// count the run reported, not an absent key (which would fall back to tensor parallelism times
// replicas). h100-sxm costs 4.76 USD an hour on demand (configs/hardware/h100-sxm.yaml).
#include <catch2/catch.hpp>

#include "sizing/run_cost.h"

namespace t_sizing_run_cost_ones_test {

using namespace servesim;
using json = nlohmann::json;

TEST_CASE("run cost ones: slo.accelerators of 1 counts one accelerator", "[sizing][cost]") {
  const json config = {{"step_time", {{"hardware", "h100-sxm"}, {"tensor_parallel", 2}}},
                       {"cluster", {{"replicas", 3}}}};
  const json one = run_cost_json({{"config", config}, {"slo", {{"accelerators", 1}}}});
  REQUIRE(one.is_object());
  CHECK(one["accelerators"] == 1);
  CHECK(one["usd_per_hour"].get<double>() == Approx(4.76));
  // Without it (or with 0, not a count), 2-way tensor parallel x 3 replicas.
  const json none = run_cost_json({{"config", config}});
  CHECK(none["accelerators"] == 6);
  const json zero = run_cost_json({{"config", config}, {"slo", {{"accelerators", 0}}}});
  CHECK(zero["accelerators"] == 6);
  // Tensor parallelism and replicas of 1 are counts of 1, as their defaults.
  const json ones = run_cost_json(
      {{"config",
        {{"step_time", {{"hardware", "h100-sxm"}, {"tensor_parallel", 1}, {"data_parallel", 1}}},
         {"cluster", {{"replicas", 1}}}}}});
  CHECK(ones["accelerators"] == 1);
}

}  // namespace t_sizing_run_cost_ones_test
