// Sizing sweeps price energy beside dollars (docs/sizing.md#energy): tokens_per_joule follows
// tokens_per_usd in points.csv and the sweep's summary.json rows.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support.h"

namespace t_sizing_tokens_per_joule_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

TEST_CASE("tokens per joule: a size sweep row has it next to tokens_per_usd", "[sizing][size]") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "base.yaml") << R"(workload:
  synthetic:
    requests: 20
    arrival: {kind: fixed, rate_per_s: 4}
    prompt_tokens: {kind: fixed, value: 200}
    output_tokens: {kind: fixed, value: 30}
step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16}
scheduler: {kind: continuous, max_num_seqs: 16, max_num_batched_tokens: 2048}
kv: {policy: paged, block_size: 16, capacity_tokens: 100000}
seed: 1
)";
  std::ofstream(dir / "s.yaml")
      << "base: base.yaml\nslo: {ttft_ms: 5000}\naxes:\n  replicas: [1, 2]\n";
  const CliResult r = cli({"size", (dir / "s.yaml").string(), "--out", (dir / "o").string(), "-q"});
  REQUIRE(r.code == 0);
  std::ifstream csv(dir / "o" / "points.csv");
  std::string line;
  std::vector<std::vector<std::string>> cells;
  while (std::getline(csv, line)) {
    std::vector<std::string> row;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) row.push_back(cell);
    cells.push_back(row);
  }
  REQUIRE(cells.size() == 3);
  const auto at = std::find(cells[0].begin(), cells[0].end(), "tokens_per_joule");
  REQUIRE(at != cells[0].end());
  REQUIRE(at != cells[0].begin());
  CHECK(*(at - 1) == "tokens_per_usd");
  const auto col = static_cast<size_t>(at - cells[0].begin());
  const double one = std::stod(cells[1][col]);
  const double two = std::stod(cells[2][col]);
  CHECK(one > 0);
  // The same load on twice the accelerators: twice the idle power for the same tokens.
  CHECK(two < one);
  std::ifstream js(dir / "o" / "summary.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  REQUIRE_FALSE(j.at("pareto_front").empty());
  CHECK(j.at("pareto_front")[0].at("tokens_per_joule").get<double>() > 0);
}

}  // namespace t_sizing_tokens_per_joule_test
