// The shared simulation options (cli/sim_options.h) --percentiles and --export on capacity and size
// (docs/cli.md#conventions, docs/sizing.md): the run at the capacity, and each point's columns and
// the cheapest points' exports.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/sizing/capacity_scenario.h"
#include "tests/support.h"

namespace t_cli_sim_options_test {

using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

// The capacity tests' hand-worked scenario (tests/sizing/capacity_scenario.h): every request's
// TTFT (and E2E) is exactly 10 ms up to rate scale 10 (the capacity), more above it. The search's
// last probe (10.0625) fails: a result taken from the last probe instead of the one at the
// capacity would show a TTFT above 10 ms.
const std::string& k_scenario = k_capacity_scenario;

// Two scenario points (rate scales 1 and 5) x two deployments that cost the same: the cheapest
// of each scenario is its first deployment (ties go to the lower point), points 0 and 2.
const std::string k_sweep = R"(base: base.yaml
slo: {ttft_ms: 10}
accelerator: h100-sxm
axes:
  workload.transform.rate_scale: [1, 5]
  scheduler.max_num_seqs: [1, 2]
)";

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("sim options: capacity reports percentiles and exports of the run at the capacity",
          "[cli][sizing]") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "c.yaml") << k_scenario;
  const std::string out = (dir / "o").string();
  const CliResult r =
      cli({"capacity", (dir / "c.yaml").string(), "--out", out, "--no-progress", "--percentiles",
           "50,100", "--export", "vllm-bench", "--export", "vidur"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("p100") && Catch::Contains("ITL"));
  CHECK_THAT(r.out, Catch::Contains(out + "/vllm-bench.json, " + out + "/request_metrics.csv"));
  const nlohmann::json v = read_json(dir / "o" / "vllm-bench.json");
  CHECK(v["completed"] == 100);
  CHECK(v["p50_ttft_ms"].get<double>() == Approx(10));
  CHECK(v["p100_ttft_ms"].get<double>() == Approx(10));  // the capacity's run, not the last
  // summary.json's ITL has the asked percentiles, as on run.
  CHECK(read_json(dir / "o" / "summary.json")["itl_s"].contains("percentiles"));
  std::ifstream vidur(dir / "o" / "request_metrics.csv");
  std::string header;
  std::getline(vidur, header);
  CHECK_THAT(header, Catch::StartsWith("Request Id"));

  const CliResult j = cli({"capacity", (dir / "c.yaml").string(), "--out", out, "--json",
                           "--percentiles", "99", "--export", "genai-perf"});
  REQUIRE(j.code == 0);
  const nlohmann::json k = nlohmann::json::parse(j.out);
  CHECK(k["latency_s"]["ttft"]["percentiles"]["p99"].get<double>() == Approx(0.010));
  CHECK(k["files"].back() == out + "/profile_export_genai_perf.json");
  // The earlier exports no longer match: removed.
  CHECK_FALSE(fs::exists(dir / "o" / "vllm-bench.json"));
  CHECK(fs::exists(dir / "o" / "profile_export_genai_perf.json"));

  const CliResult plain = cli({"capacity", (dir / "c.yaml").string(), "--out", out, "--json"});
  REQUIRE(plain.code == 0);
  CHECK_FALSE(nlohmann::json::parse(plain.out).contains("latency_s"));
  CHECK_FALSE(fs::exists(dir / "o" / "profile_export_genai_perf.json"));

  const CliResult bad =
      cli({"capacity", (dir / "c.yaml").string(), "--out", out, "-q", "--export", "genai"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--export \"genai\": unknown format (valid: genai-perf, "
                                      "vidur, vllm-bench)"));
}

TEST_CASE("sim options: size adds percentile columns per point and the cheapest points' exports",
          "[cli][sizing]") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "base.yaml") << k_scenario;
  std::ofstream(dir / "s.yaml") << k_sweep;
  const std::string out = (dir / "o").string();
  // A stale export of a point that is no longer cheapest is removed.
  fs::create_directories(dir / "o");
  std::ofstream(dir / "o" / "point-3.vllm-bench.json") << "{}";
  const CliResult r = cli({"size", (dir / "s.yaml").string(), "--out", out, "--no-progress", "-j",
                           "2", "--percentiles", "50,100", "--export", "vllm-bench"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains(out + "/point-0.vllm-bench.json, " + out +
                                    "/point-2.vllm-bench.json"));
  std::istringstream csv(slurp(dir / "o" / "points.csv"));
  std::string header, row;
  std::getline(csv, header);
  CHECK_THAT(
      header,
      Catch::EndsWith(
          ",slo_attainment,rejected,shed,timed_out,cancelled,p50_ttft_ms,p100_ttft_ms,p50_tpot_ms,"
          "p100_tpot_ms,p50_itl_ms,p100_itl_ms,p50_e2e_ms,"
          "p100_e2e_ms"));
  std::getline(csv, row);
  CHECK_THAT(row, Catch::EndsWith(",10,10,0,0,0,0,10,10"));
  const nlohmann::json s = read_json(dir / "o" / "summary.json");
  CHECK(s["cheapest_per_scenario"][1]["cheapest"]["p100_e2e_ms"].get<double>() == Approx(10));
  CHECK(read_json(dir / "o" / "point-0.vllm-bench.json")["completed"] == 100);
  CHECK(read_json(dir / "o" / "point-2.vllm-bench.json")["p50_ttft_ms"].get<double>() ==
        Approx(10));
  CHECK_FALSE(fs::exists(dir / "o" / "point-1.vllm-bench.json"));
  CHECK_FALSE(fs::exists(dir / "o" / "point-3.vllm-bench.json"));

  // Without the options: the columns and exports are gone.
  const CliResult plain = cli({"size", (dir / "s.yaml").string(), "--out", out, "-q"});
  REQUIRE(plain.code == 0);
  CHECK_THAT(slurp(dir / "o" / "points.csv"), !Catch::Contains("p50_ttft_ms"));
  CHECK_FALSE(fs::exists(dir / "o" / "point-0.vllm-bench.json"));
}

}  // namespace t_cli_sim_options_test
