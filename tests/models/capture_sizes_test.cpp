// cuda_graphs.capture_sizes at its edges (models/host_time.h, docs/config.md): a strictly
// ascending list of decimal integers from 1 to 2^20; a size repeated, 0 or one past the top is
// refused, and a size of two digits is read in base ten (a step of 9 seats pads to 10).
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_models_capture_sizes_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}";
const std::string k_kv = "{policy: paged, capacity_tokens: 4096, block_size: 16}";

std::string scenario(const std::string& trace, const std::string& sizes) {
  return trace_scenario(trace, k_linear,
                        "{kind: vllm, enable_prefix_caching: false, cuda_graphs: {capture_sizes: " +
                            sizes + ", layers: 10, eager_launch_us_per_layer: 100}}",
                        k_kv);
}

}  // namespace

TEST_CASE("capture sizes: a repeated size, 0 and one past 2^20 are refused, the edges accepted",
          "[models][host_time]") {
  const std::string one = "0,4,2\n";
  for (const char* bad : {"[2, 2]", "[1, 4, 4]", "[0, 2]", "[1048577]", "[3, 1]"}) {
    INFO(bad);
    CHECK_THAT(input_error_of(scenario(one, bad)),
               Catch::Contains("capture_sizes") && Catch::Contains("ascending"));
  }
  for (const char* good : {"[1]", "[1, 2]", "[1048576]", "[1, 1048576]"}) {
    INFO(good);
    CHECK(input_error_of(scenario(one, good)) == "(no error)");
  }
}

TEST_CASE("capture sizes: sizes of two digits are decimal, and a decode pads to the next one",
          "[models][host_time]") {
  // 9 requests of prompt 4 and 2 tokens at 0: the prefill step, then one decode step of 9
  // seats, graphed at the smallest captured size >= 9: 10 of [1, 10, 16]. Its GPU time is
  // 2 + 1 x 10 = 12 ms (no host time section: no host time).
  std::string trace;
  for (int i = 0; i < 9; ++i) trace += "0,4,2\n";
  const auto rs = run_requests(scenario(trace, "[1, 10, 16]"));
  REQUIRE(rs.size() == 9);
  for (const Request& r : rs) CHECK(r.finish - r.first_token == Time::ns(ms(12)));
  // 11 seats pad to 16: 18 ms.
  trace += "0,4,2\n0,4,2\n";
  const auto more = run_requests(scenario(trace, "[1, 10, 16]"));
  REQUIRE(more.size() == 11);
  for (const Request& r : more) CHECK(r.finish - r.first_token == Time::ns(ms(18)));
}

}  // namespace t_models_capture_sizes_test
