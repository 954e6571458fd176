// Capacity search (`servesim capacity`, sim/capacity_cmd.h) on a workload whose capacity is
// worked out by hand.
#include "sizing/capacity.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sizing/capacity_json.h"
#include "tests/sizing/capacity_scenario.h"
#include "tests/support.h"

namespace t_sizing_capacity_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

// The hand-worked scenario (tests/sizing/capacity_scenario.h): capacity 100 requests/s.
const std::string& k_config = k_capacity_scenario;

}  // namespace

TEST_CASE("capacity: finds the hand-worked saturation rate of a fixed-interval workload",
          "[sizing][capacity]") {
  CapacityOptions o;
  o.tolerance = 0.01;
  const CapacityResult r = find_capacity(k_config, "test.yaml", {}, o);
  REQUIRE(r.meeting);
  REQUIRE(r.failing);
  std::vector<double> scales;
  for (const auto& p : r.probes) scales.push_back(p.rate_scale);
  CHECK(scales == std::vector<double>{1, 2, 4, 8, 16, 12, 10, 11, 10.5, 10.25, 10.125, 10.0625});
  const CapacityProbe& m = r.probes[*r.meeting];
  CHECK(m.rate_scale == 10);
  CHECK(m.run.offered_rate_per_s == Approx(100).epsilon(1e-12));
  CHECK(m.run.summary.ttft_s.p99 == Approx(0.010).epsilon(1e-12));
  CHECK(r.probes[*r.failing].rate_scale == 10.0625);
  CHECK(r.probes[*r.failing].run.summary.ttft_s.p99 > 0.010);
}

TEST_CASE("capacity: a looser tolerance stops sooner, a rate_scale in the config composes",
          "[sizing][capacity]") {
  CapacityOptions o;
  o.tolerance = 0.5;  // 8 meets, 16 fails: 16 - 8 > 4, so 12 (fails), then 12 - 8 = 4 <= 4
  const CapacityResult r = find_capacity(k_config, "test.yaml", {}, o);
  REQUIRE(r.meeting);
  CHECK(r.probes[*r.meeting].rate_scale == 8);
  CHECK(r.probes.size() == 6);
  // With the config already at twice the rate, the capacity is half the scale.
  o.tolerance = 0.01;
  const CapacityResult h =
      find_capacity(k_config, "test.yaml", {"workload.transform={rate_scale: 2}"}, o);
  REQUIRE(h.meeting);
  CHECK(h.probes[*h.meeting].rate_scale == 5);
  CHECK(h.probes[*h.meeting].run.offered_rate_per_s == Approx(100).epsilon(1e-12));
}

TEST_CASE("capacity: the command writes capacity.json and the run's summary.json, the same twice",
          "[sizing][capacity]") {
  const std::string config = write_temp("c.yaml", k_config);
  const fs::path a = temp_dir(), b = temp_dir();
  const CliResult r = cli({"capacity", config, "--out", a.string()});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("capacity   100.0000 requests/s offered (rate scale 10)"));
  REQUIRE(cli({"capacity", config, "--out", b.string(), "-q"}).code == 0);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(slurp(a / "capacity.json") == slurp(b / "capacity.json"));
  CHECK(slurp(a / "summary.json") == slurp(b / "summary.json"));
  const auto j = nlohmann::json::parse(slurp(a / "capacity.json"));
  CHECK(j["kind"] == "capacity");
  CHECK(j["capacity"]["rate_scale"] == 10);
  CHECK(j["found"] == true);
  CHECK_THAT(slurp(a / "summary.json"), Catch::Contains("\"rate_scale\": 10"));
}

TEST_CASE("capacity: bad input exits 2 with a message", "[sizing][capacity]") {
  const fs::path out = temp_dir() / "o";
  // No slo section.
  std::string no_slo = k_config.substr(0, k_config.find("slo:"));
  CliResult r = cli({"capacity", write_temp("c.yaml", no_slo), "--out", out.string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("capacity needs an slo section"));
  r = cli({"capacity", write_temp("c.yaml", k_config), "--tolerance", "0", "--out", out.string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("--tolerance 0: must be a number from 1e-6 to 1"));
  r = cli({"capacity", write_temp("c.yaml", k_config), "--set", "scheduler.max_num_seq=2", "--out",
           out.string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("scheduler.max_num_seq"));
  CHECK_FALSE(fs::exists(out / "capacity.json"));
}

// Poisson at 0.1/s, one 10 ms step a request, and an slo that --mlperf replaces with the
// benchmark's limits.
const std::string k_mlperf_config = R"(workload:
  synthetic:
    requests: 7
    arrival: {kind: poisson, rate_per_s: 0.1}
    prompt_tokens: {kind: fixed, value: 1}
    output_tokens: {kind: fixed, value: 2}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 1}
kv: {policy: paged, capacity_tokens: 1000, block_size: 1}
slo: {ttft_ms: 1}
)";

TEST_CASE("capacity: --mlperf sets the benchmark's p99 limits and LoadGen's query count per rate",
          "[sizing][capacity]") {
  // mlperf.conf: llama2-70b Server 2,000 ms TTFT and 200 ms TPOT, interactive 450 / 40 ms,
  // llama3_1-405b 6,000 / 175 ms; LoadGen's Server minimum 600 s and 100 queries.
  CHECK(mlperf_server_rules("llama2-70b").ttft_limit_ms == 2000);
  CHECK(mlperf_server_rules("llama2-70b").tpot_limit_ms == 200);
  CHECK(mlperf_server_rules("llama2-70b-interactive").tpot_limit_ms == 40);
  CHECK(mlperf_server_rules("llama3_1-405b").ttft_limit_ms == 6000);
  // 0.1/s x 600 s = 60 queries, raised to LoadGen's 100; 0.4/s: 240; 1.0001/s: ceil(600.06).
  CHECK(loadgen_query_count(0.1) == 100);
  CHECK(loadgen_query_count(0.4) == 240);
  CHECK(loadgen_query_count(1.0001) == 601);
  CHECK_THROWS_WITH(mlperf_server_rules("llama2-7b"),
                    Catch::Contains("valid: deepseek-r1") && Catch::Contains("mixtral-8x7b"));

  // Poisson at 0.1/s, one 10 ms step a request: each probe runs LoadGen's count for its rate
  // (0.1 x scale x 600, at least 100) under the llama2-70b limits, whatever the config's slo.
  const std::string config = k_mlperf_config;
  CapacityOptions o;
  o.tolerance = 0.5;
  o.max_scale = 4;  // 0.4 requests/s at most: the SLOs hold throughout
  o.mlperf = mlperf_server_rules("llama2-70b");
  const CapacityResult r = find_capacity(config, "test.yaml", {}, o);
  REQUIRE(r.probes.size() == 3);  // 1, 2, 4
  for (const CapacityProbe& p : r.probes) {
    INFO(p.rate_scale);
    CHECK(p.meets_slo);
    CHECK(p.run.summary.requests == loadgen_query_count(0.1 * p.rate_scale));
    REQUIRE(p.run.summary.slo);
    CHECK(p.run.summary.slo->ttft->target_ms == 2000);
    CHECK(p.run.summary.slo->tpot->target_ms == 200);
    CHECK(p.run.summary.slo->percentile == 99);
  }
  CHECK(r.probes.back().run.summary.requests == 240);
  const nlohmann::ordered_json j = capacity_json("test.yaml", r, o);
  CHECK(j["mlperf"]["benchmark"] == "llama2-70b");
  CHECK(j["mlperf"]["min_duration_s"] == 600);
  // Without Poisson arrivals there is no LoadGen query count to give: refused.
  std::string fixed = config;
  fixed.replace(fixed.find("poisson"), 7, "fixed");
  CHECK_THROWS_WITH(find_capacity(fixed, "test.yaml", {}, o),
                    Catch::Contains("--mlperf needs a synthetic workload with Poisson arrivals"));
  // On the command line: an unknown benchmark, and --requests, which would fix the count.
  const fs::path dir = temp_dir();
  std::ofstream(dir / "c.yaml") << config;
  const std::string c = (dir / "c.yaml").string(), out = (dir / "o").string();
  const CliResult bad = cli({"capacity", c, "--mlperf", "llama2-7b", "--out", out});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--mlperf \"llama2-7b\": not an MLPerf LLM benchmark"));
  const CliResult fixed_count =
      cli({"capacity", c, "--mlperf", "llama2-70b", "--requests", "9", "--out", out});
  CHECK(fixed_count.code == 2);
  CHECK_THAT(fixed_count.err, Catch::Contains("--requests with --mlperf"));
}

TEST_CASE("capacity: --min-duration lengthens every MLPerf probe to the run's minimum duration",
          "[sizing][capacity]") {
  // A run that set LoadGen's min_duration to 2,400 s (several published llama2-70b runs did):
  // 0.1/s x 2,400 s = 240 queries, 0.4/s: 960; the 100-query floor still holds below 1/24 per s.
  CHECK(loadgen_query_count(0.1, 2400) == 240);
  CHECK(loadgen_query_count(0.4, 2400) == 960);
  CHECK(loadgen_query_count(0.01, 2400) == 100);
  const std::vector<std::string> o =
      mlperf_server_overrides(mlperf_server_rules("llama2-70b"), 0.4, 2400);
  CHECK(o.back() == "workload.synthetic.requests=960");

  const std::string config = k_mlperf_config;
  const fs::path dir = temp_dir();
  std::ofstream(dir / "c.yaml") << config;
  const std::string c = (dir / "c.yaml").string(), out = (dir / "o").string();
  // From 0.5/s with 100 ms steps (two steps a request: the queue stops draining below 5/s,
  // where the 2,000 ms TTFT limit fails): the run at the capacity holds ceil(rate x 2,400)
  // queries, not rate x 600.
  const CliResult r =
      cli({"capacity", c, "--mlperf", "llama2-70b", "--min-duration", "2400", "--tolerance", "0.5",
           "--out", out, "--quiet", "--no-progress", "--set",
           "workload.synthetic.arrival.rate_per_s=0.5", "--set", "step_time.base_ms=100"});
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "o" / "capacity.json"));
  CHECK(j["mlperf"]["min_duration_s"] == 2400);
  REQUIRE(j["found"] == true);
  const double rate = 0.5 * j["capacity"]["rate_scale"].get<double>();
  const nlohmann::json s = nlohmann::json::parse(std::ifstream(dir / "o" / "summary.json"));
  CHECK(s["requests"].get<int64_t>() == loadgen_query_count(rate, 2400));
  CHECK(s["requests"].get<int64_t>() > loadgen_query_count(rate));
  // Shorter than mlperf.conf's 600 s is refused (LoadGen's rules), as is --min-duration alone.
  const CliResult short_run =
      cli({"capacity", c, "--mlperf", "llama2-70b", "--min-duration", "300", "--out", out});
  CHECK(short_run.code == 2);
  CHECK_THAT(short_run.err, Catch::Contains("--min-duration"));
  const CliResult alone = cli({"capacity", c, "--min-duration", "2400", "--out", out});
  CHECK(alone.code == 2);
  CHECK_THAT(alone.err, Catch::Contains("--min-duration without --mlperf"));
}

}  // namespace t_sizing_capacity_test
