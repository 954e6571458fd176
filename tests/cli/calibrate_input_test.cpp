// Issue 19: `calibrate` held to `run`'s input promise (regular files, a size limit, enough
// rows for its folds, option ranges); `size` refusing a broken base scenario like `capacity`;
// limits stated as they are.
#include <fmt/format.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_cli_calibrate_input_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const std::string k_data = std::string(SERVESIM_SOURCE_DIR) + "/tests/data";

// A generic measurements CSV of `rows` decode steps, 1 ms + 0.01 ms per sequence.
std::string measurements(int rows) {
  std::string text = "batch_size,context_tokens,prefill_tokens,step_ms\n";
  for (int b = 1; b <= rows; ++b) text += fmt::format("{},{},0,{}\n", b, 100 * b, 1.0 + 0.01 * b);
  return text;
}

}  // namespace

TEST_CASE("calibrate input: only regular files are read whole", "[cli][calibrate][hostile]") {
  // On main /dev/zero was read until memory ran out.
  CliResult r = cli({"calibrate", "/dev/zero"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "servesim: error: /dev/zero: not a regular file (measurements are read whole: give a CSV "
        "file or a profile folder)\n");
  const auto dir = temp_dir();
  REQUIRE(mkfifo((dir / "m.csv").c_str(), 0600) == 0);
  r = cli({"calibrate", (dir / "m.csv").string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::EndsWith("m.csv: not a regular file (measurements are read whole: "
                                    "give a CSV file or a profile folder)\n"));
  // A profile folder whose table is a FIFO (or a link to a device).
  fs::create_directory(dir / "profile");
  fs::create_symlink("/dev/zero", dir / "profile" / "attention.csv");
  r = cli({"calibrate", (dir / "profile").string(), "--layers", "2"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("attention.csv: not a regular file"));
  r = cli({"calibrate", (dir / "nothere.csv").string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err,
             Catch::EndsWith("nothere.csv: cannot open measurements (no such file or folder)\n"));
}

TEST_CASE("calibrate input: one measurement cannot be cross-validated",
          "[cli][calibrate][hostile]") {
  // On main one row reported a 0.00% cross-validated error (the table form, never tested).
  const std::string one = write_temp("m.csv", measurements(1));
  CliResult r = cli({"calibrate", one});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "servesim: error: calibrate: 1 measurement left to fit; cross-validation needs at least 2 "
        "(one fitted, one held out); give more measurements\n");
  // Fewer measurements than folds: one fold each, and the header says how many.
  const std::string four = write_temp("m.csv", measurements(4));
  r = cli({"calibrate", four, "--form", "linear", "--folds", "5"});
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("MAPE 4-fold"));
}

TEST_CASE("calibrate input: out-of-range options are refused", "[cli][calibrate][hostile]") {
  const std::string m = write_temp("m.csv", measurements(10));
  // On main --worst -1 was taken as 0 (ranges checked by CommandLine::int_option now).
  CliResult r = cli({"calibrate", m, "--worst", "-1"});
  CHECK(r.code == 2);
  CHECK(r.err == "servesim: error: --worst -1: must be an integer from 0 to 1000\n");
  r = cli({"calibrate", m, "--folds", "1"});
  CHECK(r.err == "servesim: error: --folds 1: must be an integer from 2 to 100\n");
}

TEST_CASE("size input: a base scenario that cannot build exits 2, like capacity",
          "[cli][sizing][hostile]") {
  const auto dir = temp_dir();
  std::ofstream(dir / "base.yaml")
      << "workload: {synthetic: {requests: 4, arrival: {kind: fixed, rate_per_s: 1},\n"
         "  prompt_tokens: {kind: fixed, value: 10}, output_tokens: {kind: fixed, value: 2}}}\n"
         "step_time: {kind: linear, base_ms: 1}\n"
         "scheduler: {kind: contiuous, max_num_seqs: 4}\n"
         "kv: {policy: paged, capacity_tokens: 1000}\n";
  std::ofstream(dir / "s.yaml")
      << "base: base.yaml\nslo: {ttft_ms: 500}\naxes:\n  replicas: [1, 2]\n";
  // On main every point was "infeasible" and the exit status 0.
  const CliResult r = cli({"size", (dir / "s.yaml").string(), "--out", (dir / "o").string(), "-q"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("scheduler.kind = \"contiuous\""));
  CHECK_FALSE(fs::exists(dir / "o" / "points.csv"));
}

TEST_CASE("run input: --max-sim-time states its real limit", "[cli][hostile]") {
  const std::string c = write_temp(
      "c.yaml",
      "workload: {synthetic: {requests: 2, arrival: {kind: fixed, rate_per_s: 1},\n"
      "  prompt_tokens: {kind: fixed, value: 10}, output_tokens: {kind: fixed, value: 2}}}\n"
      "step_time: {kind: linear, base_ms: 1}\nscheduler: {kind: static, max_batch_size: 1}\n"
      "kv: {policy: paged, capacity_tokens: 1000}\n");
  // On main: "--max-sim-time 1e+10: must be > 0 seconds".
  const CliResult r = cli({"run", c, "--max-sim-time", "1e10", "--quiet"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "servesim: error: --max-sim-time 1e10: must be a number > 0 and <= 9e9 (seconds)\n");
}

}  // namespace t_cli_calibrate_input_test
