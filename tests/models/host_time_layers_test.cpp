// The eager launch cost needs a layer count (models/host_time.cpp), but a cost of 0 does not.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_models_host_time_layers_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("host_time: eager_launch_us_per_layer 0 needs no layer count, 1 does",
          "[models][host_time]") {
  const auto yaml = [](const std::string& launch) {
    return trace_scenario("0,16,3\n", "{kind: linear, base_ms: 2}",
                          "{kind: trtllm, cuda_graphs: {capture_sizes: [2], "
                          "eager_launch_us_per_layer: " +
                              launch + "}}",
                          "{policy: paged, block_size: 16, capacity_tokens: 256}");
  };
  CHECK(input_error_of(yaml("0")) == "(no error)");
  CHECK_THAT(input_error_of(yaml("1")), Catch::Contains("needs the model's layer count"));
}

}  // namespace t_models_host_time_layers_test
