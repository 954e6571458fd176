// read_measurements' rare paths (models/measurements.cpp): the --max-kv-per-seq region (a
// decode step is kept when its context is at most the limit times its sequences, a step with
// no decode always), its description and its refusal when nothing is left; an unknown
// --input-format named with the valid ones; the format detected from a file's header.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "models/measurements.h"
#include "tests/support.h"

namespace t_models_measurement_region_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Four steps: a prefill alone (no decode), and decodes of 2 sequences at 200, 201 and 400
// context tokens (100, 100.5 and 200 a sequence).
const char* k_steps =
    "batch_size,context_tokens,prefill_tokens,step_ms\n"
    "1,0,64,5\n"
    "2,200,0,6\n"
    "2,201,0,7\n"
    "2,400,0,8\n";

MeasurementSet read_with(int64_t max_kv) {
  MeasurementFilter f;
  f.max_kv_per_seq = max_kv;
  return read_measurements(write_temp("steps.csv", k_steps), "auto", f);
}

}  // namespace

TEST_CASE("measurement region: max-kv-per-seq keeps decodes at the limit and every prefill",
          "[models]") {
  // Limit 100: 200 over 2 sequences is exactly 100 a sequence (kept), 201 is not.
  MeasurementSet at = read_with(100);
  REQUIRE(at.samples.size() == 2);
  CHECK(at.samples[0].ms == 5);
  CHECK(at.samples[1].ms == 6);
  CHECK_THAT(at.description,
             Catch::EndsWith(", 2 of 4 kept with at most 100 KV tokens per decoding sequence"));
  CHECK(read_with(200).samples.size() == 4);
  CHECK(read_with(199).samples.size() == 3);
  // Without the filter nothing is dropped or described.
  const MeasurementSet all =
      read_measurements(write_temp("steps.csv", k_steps), "csv", MeasurementFilter{});
  CHECK(all.samples.size() == 4);
  CHECK(all.description.find("kept") == std::string::npos);
}

TEST_CASE("measurement region: a limit that leaves nothing is refused with its value", "[models]") {
  MeasurementFilter f;
  f.max_kv_per_seq = 10;
  const std::string only_decodes = write_temp(
      "d.csv", "batch_size,context_tokens,prefill_tokens,step_ms\n2,200,0,6\n1,11,0,3\n");
  CHECK_THROWS_WITH(read_measurements(only_decodes, "csv", f),
                    "--max-kv-per-seq 10: no measurement is left");
  f.max_kv_per_seq = 11;
  CHECK(read_measurements(only_decodes, "csv", f).samples.size() == 1);
}

TEST_CASE("measurement region: an unknown format lists the valid ones, auto reads the header",
          "[models]") {
  const std::string path = write_temp("steps.csv", k_steps);
  CHECK_THROWS_WITH(read_measurements(path, "vidurr", MeasurementFilter{}),
                    Catch::StartsWith("--input-format vidurr: unknown format") &&
                        Catch::EndsWith("(valid: auto, csv, llmservingsim, splitwise, vidur)"));
  CHECK(detect_measurement_format(path) == "csv");
  // Splitwise's header has both prompt_time and token_time; one of them alone is generic.
  CHECK(detect_measurement_format(write_temp("s.csv", "model,prompt_time,token_time\n")) ==
        "splitwise");
  CHECK(detect_measurement_format(write_temp("s.csv", "model,prompt_time\n")) == "csv");
  CHECK(detect_measurement_format(write_temp("s.csv", "model,token_time\n")) == "csv");
  CHECK(detect_measurement_format(temp_dir().string()) == "llmservingsim");
  CHECK_THROWS_WITH(detect_measurement_format("/no/such/steps.csv"),
                    "/no/such/steps.csv: cannot open measurements");
}

}  // namespace t_models_measurement_region_test
