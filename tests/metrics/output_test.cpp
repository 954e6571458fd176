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

TEST_CASE("yaml_to_json: every YAML type of the config echo, whole", "[metrics]") {
  // null (both spellings and a missing value), booleans, the empty string, words, infinity
  // (not finite: kept as text), lists and maps nested.
  const auto j = yaml_to_json(
      YAML::Load("{n: ~, m: null, o: , t: true, f: false, e: '', w: abc, i: inf, x: 1e999, q: '7',"
                 " l: [1, x, 2.5, [], {}], k: {a: {b: -0.5}}}"));
  CHECK(j.dump() == R"({"n":null,"m":null,"o":null,"t":true,"f":false,"e":"","w":"abc","i":"inf",)"
                    R"("x":"1e999","q":7,"l":[1,"x",2.5,[],{}],"k":{"a":{"b":-0.5}}})");
  CHECK(yaml_to_json(YAML::Node()).is_null());
  CHECK(yaml_to_json(YAML::Load("True")) == "True");  // only the lower-case spellings
  CHECK(yaml_to_json(YAML::Load("0")).is_number_integer());
  CHECK(yaml_to_json(YAML::Load("-0.0")).is_number_float());
}

}  // namespace t_metrics_output_test
