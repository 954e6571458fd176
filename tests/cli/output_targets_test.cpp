// Outputs go only to regular files or folders: a single-file output never replaces a device, a
// FIFO or a symbolic link, and a folder given where a trace file is expected is named as one
// (docs/errors.md#output-targets).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_cli_output_targets_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const std::string k_data = SERVESIM_SOURCE_DIR "/tests/data";

const char* k_workload = R"(workload:
  synthetic:
    requests: 5
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 3}
step_time: {kind: linear, base_ms: 1}
scheduler: {kind: continuous, max_num_seqs: 4}
kv: {policy: paged, capacity_tokens: 1000}
)";

std::string refusal(const std::string& option, const std::string& path, const std::string& kind) {
  return "servesim: error: " + option + " " + path + ": is " + kind +
         "; servesim writes an output only as a regular file, which it creates or replaces (give "
         "a new path or an existing regular file)\n";
}

}  // namespace

TEST_CASE("output targets: single-file outputs refuse a FIFO, a device, a folder and a link",
          "[cli][output_targets]") {
  // Each command writes its file under a fixed name in its --out folder (docs/cli.md#conventions);
  // that name may not be a FIFO, a device, a folder or a link.
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", k_workload);
  const std::string trace = k_data + "/azure_conv_2023_excerpt.csv";
  const fs::path fifos = dir / "fifos";
  fs::create_directories(fifos);
  for (const char* name : {"trace.csv", "trace_stats.json", "report.html", "step_time.yaml"})
    REQUIRE(::mkfifo((fifos / name).c_str(), 0644) == 0);
  const fs::path results = temp_dir();
  REQUIRE(cli({"run", config, "--out", results.string(), "-q"}).code == 0);

  const CliResult gen = cli({"trace", "gen", config, "--out", fifos.string()});
  CHECK(gen.code == 2);
  CHECK(gen.err == refusal("--out", (fifos / "trace.csv").string(), "a FIFO (named pipe)"));
  const CliResult stats = cli({"trace", "stats", trace, "--out", fifos.string()});
  CHECK(stats.code == 2);
  CHECK(stats.err ==
        refusal("--out", (fifos / "trace_stats.json").string(), "a FIFO (named pipe)"));
  CHECK(stats.out.empty());  // refused before the trace is read
  const CliResult report = cli({"report", results.string(), "--out", fifos.string()});
  CHECK(report.code == 2);
  CHECK(report.err == refusal("--out", (fifos / "report.html").string(), "a FIFO (named pipe)"));
  CHECK(cli({"calibrate", k_data + "/splitwise_excerpt.csv", "--source-model", "llama2-70b",
             "--source-hardware", "h100-80gb", "--source-tp", "4", "--out", fifos.string()})
            .err == refusal("--out", (fifos / "step_time.yaml").string(), "a FIFO (named pipe)"));
  CHECK(fs::is_fifo(fifos / "trace.csv"));

  // --out itself must be a folder (or absent): a device is refused before anything runs.
  CHECK(cli({"trace", "gen", config, "--out", "/dev/null"}).err ==
        "servesim: error: --out \"/dev/null\": is not a folder; --out is a folder in every "
        "subcommand: trace gen writes DIR/trace.csv (docs/cli.md#conventions)\n");
  const fs::path linked = dir / "linked";
  fs::create_directories(linked);
  const std::string link = (linked / "trace.csv").string();
  fs::create_symlink(dir / "target.csv", link);
  CHECK(cli({"trace", "gen", config, "--out", linked.string()}).err ==
        refusal("--out", link, "a symbolic link"));
  CHECK(fs::is_symlink(link));
  CHECK_FALSE(fs::exists(dir / "target.csv"));
  fs::create_directories(dir / "taken" / "report.html");
  CHECK(cli({"report", results.string(), "--out", (dir / "taken").string()}).err ==
        refusal("--out", (dir / "taken" / "report.html").string(), "a folder"));

  // A regular file is replaced, and no temporary is left beside it.
  const fs::path out = dir / "sub" / "trace.csv";
  REQUIRE(cli({"trace", "gen", config, "--out", (dir / "sub").string()}).code == 0);
  REQUIRE(cli({"trace", "gen", config, "--out", (dir / "sub").string(), "--requests", "2"}).code ==
          0);
  std::ifstream in(out);
  CHECK(std::count(std::istreambuf_iterator<char>(in), {}, '\n') == 3);
  CHECK(std::distance(fs::directory_iterator(dir / "sub"), {}) == 1);
}

TEST_CASE("output targets: a folder given as a trace is named as a folder",
          "[cli][output_targets]") {
  const fs::path dir = temp_dir();
  const CliResult stats = cli({"trace", "stats", dir.string()});
  CHECK(stats.code == 2);
  CHECK(stats.err == "servesim: error: " + dir.string() + ": is a directory, not a trace file\n");
  const std::string config =
      write_temp("c.yaml", "workload: {trace: {path: " + dir.string() +
                               "}}\nstep_time: {kind: linear, base_ms: 1}\nscheduler: {kind: "
                               "static, max_batch_size: 1}\nkv: {policy: paged, capacity_tokens: "
                               "1000}\n");
  const CliResult run = cli({"run", config, "--out", (dir / "o").string()});
  CHECK(run.code == 2);
  CHECK_THAT(run.err, Catch::Contains("workload.trace.path = \"" + dir.string()));
  CHECK_THAT(run.err, Catch::Contains(": is a directory, not a trace file (" + dir.string() + ")"));
}

}  // namespace t_cli_output_targets_test
