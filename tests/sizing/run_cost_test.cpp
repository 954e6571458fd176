// A run's cost for the report's run comparison (sizing/run_cost.h): the catalogue's price x the
// run's accelerators, as `servesim size` prices a point; and the page's reads of it.
#include "sizing/run_cost.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/report.h"
#include "report/report_data.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_sizing_run_cost_test {

using namespace servesim;
using namespace servesim::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string k_run = R"(workload:
  synthetic:
    requests: 4
    arrival: {kind: fixed, rate_per_s: 4}
    prompt_tokens: {kind: fixed, value: 100}
    output_tokens: {kind: fixed, value: 10}
step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16,
            tensor_parallel: 2}
scheduler: {kind: continuous, max_num_seqs: 8}
kv: {policy: paged, block_size: 16, capacity_tokens: 65536}
cluster: {replicas: 3, router: {kind: round_robin}}
)";

std::string text_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json summary_of(const std::string& config, const std::vector<std::string>& sets = {}) {
  const fs::path dir = temp_dir() / "run";
  std::vector<std::string> args{"run", write_temp("cost.yaml", config), "--out", dir.string(),
                                "--quiet"};
  for (const auto& s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  const CliResult r = cli(args);
  REQUIRE(r.code == 0);
  return json::parse(text_of(dir / "summary.json"));
}

}  // namespace

TEST_CASE("run cost: the catalogue price times tensor parallel times replicas", "[sizing][cost]") {
  const json s = summary_of(k_run);
  const json c = run_cost_json(s);
  REQUIRE(c.is_object());
  CHECK(c["hardware"] == "h100-sxm");
  CHECK(c["accelerators"] == 6);  // 2-way tensor parallel x 3 replicas
  CHECK(c["price_tier"] == "on_demand");
  CHECK(c["usd_per_accelerator_hour"] == 4.76);  // configs/hardware/h100-sxm.yaml
  CHECK(c["usd_per_hour"].get<double>() == Approx(6 * 4.76));
  CHECK(c["tokens_per_usd"].get<double>() ==
        Approx(s["output_tokens_per_s"].get<double>() * 3600 / (6 * 4.76)));
  // slo.accelerators, when the run gives it, is what the run stands for.
  CHECK(run_cost_json(
            summary_of(k_run, {"slo={ttft_ms: 1000, accelerators: 5}"}))["accelerators"] == 5);
  // A chip without an on_demand price is priced in the mixed tier, and says so.
  const json mixed = run_cost_json(summary_of(k_run, {"step_time.hardware=mi300x"}));
  CHECK(mixed["price_tier"] == "mixed");
  CHECK(mixed["usd_per_hour"].get<double>() == Approx(6 * 1.50));
  // No accelerator named: no cost.
  CHECK(run_cost_json(summary_of("workload: {synthetic: {requests: 2, arrival: {kind: fixed, "
                                 "rate_per_s: 4}, prompt_tokens: {kind: fixed, value: 10}, "
                                 "output_tokens: {kind: fixed, value: 2}}}\n"
                                 "step_time: {kind: linear, base_ms: 5}\n"
                                 "scheduler: {kind: continuous, max_num_seqs: 8}\n"
                                 "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n"))
            .is_null());
  CHECK(run_cost_json(json::object()).is_null());
}

TEST_CASE("run cost: the report page gets each run's cost and reads only keys it has",
          "[sizing][cost][report]") {
  const fs::path dir = temp_dir() / "run";
  REQUIRE(cli({"run", write_temp("cost.yaml", k_run), "--out", dir.string(), "--quiet"}).code == 0);
  const fs::path page = temp_dir() / "report.html";
  write_report({dir.string()}, page.string(), nullptr, {}, &run_cost_json);
  const std::string html = text_of(page);
  CHECK(html.find("\"cost\":{\"accelerators\":6,\"hardware\":\"h100-sxm\"") != std::string::npos);
  // Every runCost('name') of report.js is a key of the cost object.
  const json c = run_cost_json(json::parse(text_of(dir / "summary.json")));
  CHECK(read_result_dir(dir.string(), &run_cost_json)["cost"] == c);
  CHECK(read_result_dir(dir.string())["cost"].is_null());
  const std::string js = text_of(fs::path(SERVESIM_SOURCE_DIR) / "report" / "report.js");
  int n = 0;
  for (size_t at = js.find("runCost('"); at != std::string::npos;
       at = js.find("runCost('", at + 1)) {
    const size_t from = at + 9;
    const std::string key = js.substr(from, js.find('\'', from) - from);
    if (key == "path") continue;
    INFO(key);
    CHECK(c.contains(key));
    ++n;
  }
  CHECK(n >= 5);
}

TEST_CASE("run cost: a sweep folder gives the page its scenario axes and no cheapest axis",
          "[sizing][cost][report]") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "base.yaml") << k_run;
  std::ofstream(dir / "s.yaml") << "base: base.yaml\nslo: {ttft_ms: 1000}\naxes:\n"
                                   "  scheduler.max_num_seqs: [4, 8]\n"
                                   "  workload.transform.rate_scale: [1, 2]\n";
  REQUIRE(cli({"size", (dir / "s.yaml").string(), "--out", (dir / "o").string(), "-q"}).code == 0);
  const json sw = read_result_dir((dir / "o").string());
  CHECK(sw["axes"] == json({"scheduler.max_num_seqs", "workload.transform.rate_scale"}));
  CHECK(sw["scenario_axes"] == json({"workload.transform.rate_scale"}));
  CHECK(sw["points"][0].contains("cheapest"));
  // The hand-written fixture predates roles: null, and the page infers them.
  CHECK(read_result_dir(std::string(SERVESIM_SOURCE_DIR) +
                        "/tests/data/report/sweep-fixture")["scenario_axes"]
            .is_null());
}

}  // namespace t_sizing_run_cost_test
