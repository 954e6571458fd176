// Every command honours SIGINT, SIGTERM and SIGHUP (main's handler stores the signal's number in
// the flag run_cli polls): `run` writes its results marked partial and exits 0; every other
// command stops, leaves nothing it was writing and exits 128 + the signal's number
// (docs/errors.md#signals). Here the flag is set before the command starts, as if the signal
// came at once; tests/cli/signals_test.sh sends real signals to the built binary.
#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "tests/sizing/capacity_scenario.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_cli_interrupt_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const std::string k_data = SERVESIM_SOURCE_DIR "/tests/data";

const char* k_workload = R"(workload:
  synthetic:
    requests: 100
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 1}
    output_tokens: {kind: fixed, value: 1}
)";

const std::string& k_scenario = k_capacity_scenario;  // tests/sizing/capacity_scenario.h

CliResult interrupted(const std::vector<std::string>& args, int signal = SIGTERM) {
  const volatile std::sig_atomic_t flag = signal;
  std::ostringstream out, err;
  const int code = run_cli(args, out, err, &flag);
  return {code, out.str(), err.str()};
}

bool empty_dir(const fs::path& dir) { return fs::is_empty(dir); }

}  // namespace

TEST_CASE("interrupt: run writes partial results and exits 0, as it always has",
          "[cli][interrupt]") {
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", k_scenario);
  const CliResult r = interrupted({"run", config, "--out", dir.string(), "-q"}, SIGHUP);
  CHECK(r.code == 0);
  std::ifstream in(dir / "summary.json");
  const std::string summary(std::istreambuf_iterator<char>(in), {});
  CHECK_THAT(summary, Catch::Contains("\"stopped_by\": \"interrupted\""));
  CHECK_THAT(summary, Catch::Contains("\"partial\": true"));
  for (const auto& e : fs::directory_iterator(dir))  // no temporary, no lock file left
    CHECK(e.path().filename().string().front() != '.');
}

TEST_CASE("interrupt: every other command stops, writes nothing and exits 128 + N",
          "[cli][interrupt]") {
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", k_scenario);
  const fs::path results = temp_dir();
  REQUIRE(cli({"run", config, "--out", results.string(), "-q"}).code == 0);
  const std::string sweep = SERVESIM_SOURCE_DIR "/configs/sweeps/sizing-small.yaml";
  const std::vector<std::vector<std::string>> commands{
      {"capacity", config, "--out", (dir / "capacity").string(), "-q"},
      {"size", sweep, "--out", (dir / "size").string(), "-q"},
      {"trace", "gen", write_temp("w.yaml", k_workload), "--out", (dir / "trace").string()},
      {"trace", "stats", k_data + "/azure_conv_2023_excerpt.csv", "--out",
       (dir / "stats").string()},
      {"report", results.string(), "--out", (dir / "report").string()},
      {"calibrate", k_data + "/splitwise_excerpt.csv", "--source-model", "llama2-70b",
       "--source-hardware", "h100-80gb", "--source-tp", "4", "--out", (dir / "calibrate").string()},
  };
  for (const auto& args : commands) {
    for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
      INFO(args[0] << " " << args[1] << " signal " << signal);
      const CliResult r = interrupted(args, signal);
      CHECK(r.code == 128 + signal);
      CHECK_THAT(r.err, Catch::EndsWith("interrupted by " +
                                        std::string(signal == SIGINT    ? "SIGINT"
                                                    : signal == SIGTERM ? "SIGTERM"
                                                                        : "SIGHUP") +
                                        "; nothing was written\n"));
      CHECK(empty_dir(dir));  // no result, no temporary, no folder created for the results
    }
  }
}

}  // namespace t_cli_interrupt_test
