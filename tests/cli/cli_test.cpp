// The command line end to end: every shipped config runs; bad input exits 2 and writes nothing.
#include "cli/cli.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/golden_figures.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "tests/text.h"

namespace t_cli_cli_test {

using namespace servesim;
using namespace servesim::test;
using namespace servesim::test::golden;
namespace fs = std::filesystem;

// Every shipped scenario runs, passes the engine's invariant checks, and (in full, outside the
// sanitizer build) gives the answers recorded in tests/data/golden/configs.json: its summary.json's
// figures and the table it prints (scripts/golden.py writes that file; rerun it when a change is
// meant to move an example's figures, and the diff shows which moved).
TEST_CASE("cli: every config in configs/ runs and writes its results", "[cli]") {
  Json golden;
  std::ifstream(fs::path(SERVESIM_SOURCE_DIR) / "tests/data/golden/configs.json") >> golden;
  REQUIRE(golden.is_object());
  std::set<std::string> seen;
  int n = 0;
  const fs::path configs = fs::path(SERVESIM_SOURCE_DIR) / "configs";
  const std::set<fs::path> not_scenarios{"models", "hardware", "shape-roofline", "step_times",
                                         "sweeps"};
  for (auto it = fs::recursive_directory_iterator(configs);
       it != fs::recursive_directory_iterator(); ++it) {
    // Catalogue entries and step-time data are read by scenarios, not scenarios themselves
    // (tests/models/catalog_test.cpp loads every catalogue file, shape_roofline_test.cpp every
    // shape-roofline fit).
    if (it->is_directory() && not_scenarios.count(it->path().lexically_relative(configs))) {
      it.disable_recursion_pending();
      continue;
    }
    const auto& e = *it;
    if (e.path().extension() != ".yaml") continue;
    ++n;
    INFO(e.path());
    const fs::path dir = temp_dir() / "out";
    const std::string rel = e.path().lexically_relative(configs).generic_string();
    seen.insert(rel);
    REQUIRE(golden.contains(rel));
    std::vector<std::string> args{"run",        e.path().string(), "--out",
                                  dir.string(), "--no-progress",   "--check"};
    if (kSanitized) args.insert(args.end(), {"--max-sim-time", "60"});
    // scripts/golden.py keeps the steps of the configs with few enough of them.
    if (!kSanitized && golden[rel].contains("(steps.csv) rows")) args.push_back("--steps");
    const CliResult r = cli(args);
    CHECK(r.err == "");
    REQUIRE(r.code == 0);
    CHECK(fs::file_size(dir / "summary.json") > 100);
    CHECK(fs::file_size(dir / "requests.csv") > 100);
    Json summary;
    std::ifstream(dir / "summary.json") >> summary;
    std::map<std::string, Json> figures;
    flatten(summary, "", figures);
    figures["(stdout)"] = replace_all(r.out, dir.string(), "OUT");  // the table it printed
    if (kSanitized) continue;
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".csv") csv_figures(f.path(), figures);
    INFO("figures that moved (rerun scripts/golden.py if the change is meant):");
    CHECK(golden_differences(golden[rel], figures) == "");
  }
  CHECK(n >= 8);
  for (const auto& [rel, figures] : golden.items()) {
    INFO(rel << " is in the golden file but is no longer a scenario under configs/");
    CHECK(seen.count(rel));
  }
}

// Every sweep under configs/sweeps (but scripts/golden.py's SLOW_SWEEPS) gives the answers
// recorded in tests/data/golden/sweeps.json: its summary.json's figures, the table it prints and
// its points.csv, the repository's root written as ROOT. The sanitizer build leaves them to the
// Release build (the sizing code runs under the sanitizers in tests/sizing).
TEST_CASE("cli: every sweep in configs/sweeps gives its recorded answers", "[cli][sizing]") {
  if (kSanitized) return;
  Json golden;
  std::ifstream(fs::path(SERVESIM_SOURCE_DIR) / "tests/data/golden/sweeps.json") >> golden;
  REQUIRE(golden.is_object());
  const std::set<std::string> slow{"sizing-azure-conv-accelerators.yaml", "sweep-kv-offload.yaml"};
  const std::string root = SERVESIM_SOURCE_DIR;
  std::set<std::string> seen;
  for (const auto& e : fs::directory_iterator(fs::path(root) / "configs" / "sweeps")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".yaml" || slow.count(name)) continue;
    const std::string rel = "sweeps/" + name;
    INFO(rel);
    seen.insert(rel);
    REQUIRE(golden.contains(rel));
    const fs::path dir = temp_dir() / "out";
    const CliResult r = cli({"size", e.path().string(), "--out", dir.string(), "--no-progress"});
    CHECK(r.err == "");
    REQUIRE(r.code == 0);
    std::ifstream in(dir / "summary.json");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::map<std::string, Json> figures;
    flatten(Json::parse(replace_all(text, root, "ROOT")), "", figures);
    figures["(stdout)"] = replace_all(replace_all(r.out, dir.string(), "OUT"), root, "ROOT");
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".csv") csv_figures(f.path(), figures);
    INFO("figures that moved (rerun scripts/golden.py if the change is meant):");
    CHECK(golden_differences(golden[rel], figures) == "");
  }
  CHECK(seen.size() >= 8);
  for (const auto& [rel, figures] : golden.items()) {
    INFO(rel << " is in the golden file but is no longer a sweep under configs/sweeps");
    CHECK(seen.count(rel));
  }
}

TEST_CASE("cli: the default scenario runs, prints a summary and is reproducible", "[cli]") {
  const fs::path a = temp_dir(), b = temp_dir();
  const CliResult r = cli({"run", "--out", a.string()});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("200 finished"));
  CHECK_THAT(r.out, Catch::Contains("TTFT"));
  REQUIRE(cli({"run", "--out", b.string(), "--quiet"}).code == 0);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(slurp(a / "requests.csv") == slurp(b / "requests.csv"));
  CHECK(slurp(a / "summary.json") == slurp(b / "summary.json"));
  // --seed changes the workload and is recorded.
  REQUIRE(cli({"run", "--out", b.string(), "--quiet", "--seed", "7"}).code == 0);
  CHECK(slurp(a / "requests.csv") != slurp(b / "requests.csv"));
  CHECK_THAT(slurp(b / "summary.json"), Catch::Contains("\"seed\": 7"));
}

TEST_CASE("cli: bad input exits 2 with a message and writes no output", "[cli]") {
  const fs::path dir = temp_dir() / "never";
  const CliResult r1 = cli({"run", "--out", dir.string(), "--set", "scheduler.max_num_seqs=0"});
  CHECK(r1.code == 2);
  CHECK_THAT(r1.err, Catch::Contains("scheduler.max_num_seqs = \"0\""));
  const CliResult r2 = cli({"run", "/nonexistent.yaml", "--out", dir.string()});
  CHECK(r2.code == 2);
  CHECK_THAT(r2.err, Catch::Contains("/nonexistent.yaml: cannot open config file"));
  const CliResult r3 = cli({"run", "--out", dir.string(), "--seed", "-3"});
  CHECK(r3.code == 2);
  CHECK_THAT(r3.err, Catch::Contains("--seed -3: must be an integer from 0 to"));
  CHECK_FALSE(fs::exists(dir));
  const CliResult r4 = cli({"rnu"});
  CHECK(r4.code == 2);
  CHECK_THAT(r4.err, Catch::StartsWith("servesim: error: unknown command 'rnu'\nhint: did you mean "
                                       "'run'?"));
  const CliResult r5 = cli({"run", "--bogus"});
  CHECK(r5.code == 2);
  CHECK_THAT(r5.err, Catch::Contains("unrecognised option '--bogus'"));
}

TEST_CASE("cli: an output directory that cannot be written is an input error", "[cli]") {
  const std::string file = write_temp("plain-file", "x");
  const CliResult r = cli({"run", "--out", file + "/sub", "--quiet"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot create the output directory"));
}

TEST_CASE("cli: list names the registered components", "[cli]") {
  const CliResult all = cli({"list"});
  CHECK(all.code == 0);
  CHECK_THAT(all.out, Catch::Contains(
                          "schedulers: continuous dynamic orca sarathi sglang static trtllm vllm"));
  CHECK_THAT(all.out, Catch::Contains("linear operator roofline table"));
  CHECK_THAT(all.out, Catch::Contains("models: codellama-34b deepseek-v3 gpt2-small llama-2-13b"));
  CHECK_THAT(all.out, Catch::Contains("hardware: a100-40gb a100-80gb"));
  CHECK_THAT(cli({"list", "models"}).out, Catch::Contains("\nllama-3.1-8b\n"));
  CHECK_THAT(cli({"list", "hardware"}).out, Catch::Contains("\nh100-sxm\n"));
  CHECK_THAT(all.out,
             Catch::Contains("workload-sources: closed_loop mix servegen synthetic trace"));
  CHECK(cli({"list", "schedulers"}).out ==
        "continuous\ndynamic\norca\nsarathi\nsglang\nstatic\ntrtllm\nvllm\n");
  CHECK(cli({"list", "routers"}).out ==
        "least_kv\nleast_outstanding\nlora_affinity\nprefix_affinity\nrandom\nround_robin\n");
  CHECK(cli({"list", "arrival-kinds"}).out == "burst\ndaily\nfixed\ngamma\nonoff\npoisson\n");
  CHECK_THAT(cli({"list", "length-kinds"}).out,
             Catch::Contains("empirical\n") && Catch::Contains("zipf\n"));
  CHECK(cli({"list", "schedulerz"}).code == 2);
}

}  // namespace t_cli_cli_test
