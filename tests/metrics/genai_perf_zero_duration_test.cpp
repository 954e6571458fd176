// GenAI-Perf's profile export (metrics/exports.cpp) for a run of no duration: its rates per
// second are 0, not a division by zero (which the JSON would print as null).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "metrics/exports.h"
#include "metrics/output.h"

namespace t_metrics_genai_perf_zero_duration_test {

using namespace servesim;

TEST_CASE("exports: GenAI-Perf's rates over a run of no duration are 0", "[metrics]") {
  Summary s;
  s.duration_s = 0;
  s.finished = 0;
  s.output_tokens = 0;
  TokenTimes t;
  std::ostringstream text;
  write_genai_perf_json(text, s, t, {99.0});
  const nlohmann::json j = nlohmann::json::parse(text.str());
  INFO(text.str());
  REQUIRE(j["output_token_throughput"]["avg"].is_number());
  CHECK(j["output_token_throughput"]["avg"].get<double>() == 0.0);
  REQUIRE(j["request_throughput"]["avg"].is_number());
  CHECK(j["request_throughput"]["avg"].get<double>() == 0.0);
  CHECK(j["request_count"]["avg"].get<double>() == 0.0);
  CHECK_FALSE(j.contains("time_to_first_token"));  // no finished request: no latency metrics
}

}  // namespace t_metrics_genai_perf_zero_duration_test
