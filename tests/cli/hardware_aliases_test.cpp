// Hardware aliases (models/catalog.cpp, docs/hardware.md#aliases): the names data folders, other
// tools and people use for the catalogue's accelerators resolve to the catalogue's entry, in any
// case and with '_' or ' ' for '-'; a name close to an alias suggests the entry it stands for.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "models/catalog.h"
#include "tests/support.h"

namespace t_cli_hardware_aliases_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("hardware aliases: each names a catalogue entry and none is one", "[cli][catalog]") {
  const std::vector<std::string> names = hardware_names();
  const std::set<std::string> catalogue(names.begin(), names.end());
  std::set<std::string> seen;
  REQUIRE(hardware_aliases().size() >= 20);
  for (const HardwareAlias& a : hardware_aliases()) {
    INFO(a.alias);
    CHECK(catalogue.count(a.name) == 1);
    CHECK(catalogue.count(a.alias) == 0);
    CHECK(seen.insert(a.alias).second);  // listed once
    // Written as the lookup compares them: lower case, '-' between words.
    for (const char* p = a.alias; *p; ++p)
      CHECK((*p == '-' || std::isdigit(*p) || std::islower(*p)));
    CHECK(load_hardware(a.alias).name == a.name);
  }
}

TEST_CASE("hardware aliases: the data folders' names and users' names resolve", "[cli][catalog]") {
  // AIConfigurator's systems, Vidur's and LLMServingSim's folders, nvidia-smi's name.
  const std::vector<std::pair<std::string, std::string>> cases{
      {"h100", "h100-sxm"},
      {"H100", "h100-sxm"},
      {"h100_sxm", "h100-sxm"},
      {"H100-SXM", "h100-sxm"},
      {"h200_sxm", "h200"},
      {"b200_sxm", "b200"},
      {"a100_sxm", "a100-80gb"},
      {"a100", "a100-80gb"},
      {"l40s", "l40s"},
      {"rtx_pro_6000_server", "rtx-pro-6000"},
      {"RTXPRO6000", "rtx-pro-6000"},
      {"RTX4090", "rtx-4090"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"a100-80g", "a100-80gb"},
      // MLPerf Inference's accelerator names and nvidia-smi's for the PCIe NVL cards.
      {"H100-NVL-94GB", "h100-nvl"},
      {"NVIDIA H100 NVL", "h100-nvl"},
      {"H200-NVL-141GB", "h200-nvl"},
      {"NVIDIA H200 NVL", "h200-nvl"},
      {"GB200", "gb200"},
      {"NVIDIA GB200", "gb200"},
      {"GB200_NVL72", "gb200"},
      {"AMD Instinct MI355X", "mi355x"},
      {"MI355X", "mi355x"},
  };
  for (const auto& [given, entry] : cases) {
    INFO(given);
    CHECK(load_hardware(given).name == entry);
  }
  // Through a scenario's key and the command line.
  const std::string yaml =
      "workload: {synthetic: {requests: 5, arrival: {kind: poisson, rate_per_s: 1},\n"
      "  prompt_tokens: {kind: fixed, value: 100}, output_tokens: {kind: fixed, value: 10}}}\n"
      "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100}\n"
      "scheduler: {kind: continuous, max_num_seqs: 4}\n"
      "kv: {policy: paged, capacity_tokens: 100000, block_size: 16}\n";
  const std::string config = write_temp("h100.yaml", yaml);
  const CliResult run = cli({"run", config, "--out", (temp_dir() / "o").string(), "-q"});
  CHECK(run.code == 0);
  CHECK(run.err.empty());
  const CliResult ex = cli({"explain", "--model", "llama-3.1-8b", "--hardware", "h100"});
  CHECK(ex.code == 0);
  CHECK_THAT(ex.out, Catch::StartsWith("llama-3.1-8b on h100-sxm:"));
}

TEST_CASE("hardware aliases: an unknown name suggests the entry an alias stands for",
          "[cli][catalog]") {
  // "h100-sx" is one edit from the alias h100-sxm5's target's name; "h10" from the alias h100:
  // the suggestion is the catalogue's entry, never h200.
  CHECK_THROWS_WITH(load_hardware("h10"), Catch::Contains("(did you mean h100-sxm?)"));
  CHECK_THROWS_WITH(load_hardware("h100-sx"), Catch::Contains("(did you mean h100-sxm?)"));
  CHECK_THROWS_WITH(load_hardware("rtx409"), Catch::Contains("(did you mean rtx-4090?)"));
  CHECK_THROWS_WITH(load_hardware("tpu-v5"),
                    Catch::Contains("unknown hardware \"tpu-v5\" (valid: a100-40gb") &&
                        Catch::Contains("or an alias of one (docs/hardware.md#aliases)"));
  // Model names are not normalized: the model catalogue has no aliases.
  CHECK_THROWS_WITH(load_model("LLAMA-3.1-8B"), Catch::Contains("unknown model"));
}

}  // namespace t_cli_hardware_aliases_test
