// Utilisation figures (MBU, MFU, the bandwidth-bound share) come from every run whose step model
// reports a cost, down to a run of one step.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support.h"

namespace t_metrics_one_step_utilisation_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

TEST_CASE("utilisation: a run of exactly one costed step reports MBU, MFU and its bound",
          "[metrics]") {
  // One request of one output token: its prefill step makes the only token, so the run has one
  // step, costed by the roofline.
  const fs::path dir = temp_dir();
  const std::string config =
      trace_scenario("0,64,1\n", "{kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}",
                     "{kind: continuous, max_num_seqs: 4}",
                     "{policy: paged, capacity_tokens: 1000, block_size: 16}");
  std::ofstream(dir / "c.yaml") << config;
  const CliResult r = cli({"run", (dir / "c.yaml").string(), "--out", (dir / "o").string(), "-q"});
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "o" / "summary.json"));
  INFO(j.dump());
  REQUIRE(j.contains("mbu"));
  REQUIRE(j["mbu"].is_number());
  CHECK(j["mbu"].get<double>() > 0);
  REQUIRE(j["mfu"].is_number());
  CHECK(j["mfu"].get<double>() > 0);
  REQUIRE(j["bandwidth_bound_step_share"].is_number());
  const double share = j["bandwidth_bound_step_share"].get<double>();
  CHECK((share == 0.0 || share == 1.0));  // one step: bound by one or the other
}

}  // namespace t_metrics_one_step_utilisation_test
