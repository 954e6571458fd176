// yaml_to_json (metrics/output.cpp): how summary.json's "config" types each YAML scalar.
#include "metrics/output.h"

#include <catch2/catch.hpp>
#include <cstdint>

namespace t_metrics_output_test {

using namespace servesim;

TEST_CASE("yaml_to_json: a whole number stays an integer, exactly, and other numbers are doubles",
          "[metrics]") {
  // 9007199254740993 is 2^53 + 1, which no double holds (it would print ...992); "1e3" starts
  // with a whole number but does not end with it, so it is read as the double 1000; "12abc" is
  // no number at all.
  const auto j =
      yaml_to_json(YAML::Load("{a: 42, b: -7, c: 9007199254740993, d: 2.5, e: 1e3, f: 12abc}"));
  CHECK(j["a"].is_number_integer());
  CHECK(j["b"].is_number_integer());
  CHECK(j["c"].get<int64_t>() == int64_t{9007199254740993});
  CHECK(j["d"].is_number_float());
  CHECK(j["e"].is_number_float());
  CHECK(j["f"].is_string());
  CHECK(j.dump() == R"({"a":42,"b":-7,"c":9007199254740993,"d":2.5,"e":1000.0,"f":"12abc"})");
}

}  // namespace t_metrics_output_test
