// Bounded runs: a simulated-time or wall-time limit, or an interrupt, writes partial results
// marked as such.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/support.h"

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("limits: a simulated-time limit writes partial results, marked", "[sim][limits]") {
  const auto dir = temp_dir();
  const CliResult r = cli({"run", "--out", dir.string(), "--max-sim-time", "10", "--check"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("PARTIAL    stopped early (simulated time limit)"));
  const std::string summary = slurp(dir / "summary.json");
  CHECK_THAT(summary, Catch::Contains("\"partial\": true"));
  CHECK_THAT(summary, Catch::Contains("\"stopped_by\": \"simulated time limit\""));
  // Requests in flight at 10 s are listed as unfinished; none released after the limit.
  const std::string csv = slurp(dir / "requests.csv");
  CHECK_THAT(csv, Catch::Contains(",unfinished,\""));
  // A complete run says it is complete.
  REQUIRE(cli({"run", "--out", dir.string(), "--quiet"}).code == 0);
  CHECK_THAT(slurp(dir / "summary.json"), Catch::Contains("\"partial\": false"));
}

TEST_CASE("limits: an interrupt stops the run and still writes what it has", "[sim][limits]") {
  const auto dir = temp_dir();
  const volatile std::sig_atomic_t interrupted = 1;  // as if SIGINT arrived at once
  std::ostringstream out, err;
  REQUIRE(run_cli({"run", "--out", dir.string(), "--quiet"}, out, err, &interrupted) == 0);
  CHECK_THAT(slurp(dir / "summary.json"), Catch::Contains("\"stopped_by\": \"interrupted\""));
}

TEST_CASE("limits: impossible bounds are input errors", "[sim][limits]") {
  CHECK(cli({"run", "--max-sim-time", "0"}).code == 2);
  CHECK_THAT(cli({"run", "--max-wall-time", "-1"}).err,
             Catch::Contains("--max-wall-time -1: must be > 0"));
}
