// Bounded runs: a simulated-time or wall-time limit, or an interrupt, writes partial results
// marked as such.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/support.h"

namespace t_sim_limits_test {

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
             Catch::Contains("--max-wall-time -1: must be a number > 0"));
}

TEST_CASE("limits: a workload far past capacity stops at the queue limit, marked partial",
          "[sim][limits]") {
  // 1,000 requests at a million a second on a server that takes 10 ms a step and 8 at a time:
  // the queue grows by about one request a microsecond, so more than 50 are held after ~50 us.
  const std::string config = write_temp("c.yaml", R"(workload:
  synthetic:
    requests: 1000
    arrival: {kind: fixed, rate_per_s: 1000000}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 10}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 8}
kv: {policy: paged, capacity_tokens: 100000}
)");
  const auto dir = temp_dir();
  const CliResult r =
      cli({"run", config, "--out", dir.string(), "--max-queued", "50", "--no-progress"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("PARTIAL    stopped early (queue limit): 51 requests arrived "
                                    "and were not served"));
  CHECK_THAT(r.out, Catch::Contains("queue      more than 50 requests were held at once: the "
                                    "workload arrives faster than the server serves it "
                                    "(--max-queued sets the limit)"));
  const std::string summary = slurp(dir / "summary.json");
  CHECK_THAT(summary, Catch::Contains("\"stopped_by\": \"queue limit\""));
  CHECK_THAT(summary, Catch::Contains("\"peak_in_flight_requests\": 51,"));
  // The engine's own default bounds every run, sweeps and capacity probes included.
  CHECK(RunLimits{}.max_queued == 2'000'000);
  RunLimits limits;
  limits.max_queued = 50;
  Simulation sim(build_scenario(std::make_shared<Document>(slurp(config), "c.yaml")).components,
                 false, limits);
  sim.run();
  CHECK(sim.stats().stopped_by == "queue limit");
  CHECK(sim.stats().peak_in_flight == 51);
}

}  // namespace t_sim_limits_test
