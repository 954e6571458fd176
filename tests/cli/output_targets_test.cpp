// Outputs go only to regular files or folders: a single-file output never replaces a device, a
// FIFO or a symbolic link, and a folder given where a trace file is expected is named as one
// (docs/errors.md#output-targets).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/support.h"

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
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", k_workload);
  const std::string trace = k_data + "/azure_conv_2023_excerpt.csv";
  const std::string fifo = (dir / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const std::string link = (dir / "link.csv").string();
  fs::create_symlink(dir / "target.csv", link);
  const fs::path results = temp_dir();
  REQUIRE(cli({"run", config, "--out", results.string(), "-q"}).code == 0);

  const CliResult gen = cli({"trace", "gen", config, "--out", fifo});
  CHECK(gen.code == 2);
  CHECK(gen.err == refusal("--out", fifo, "a FIFO (named pipe)"));
  const CliResult stats = cli({"trace", "stats", trace, "--json", fifo});
  CHECK(stats.code == 2);
  CHECK(stats.err == refusal("--json", fifo, "a FIFO (named pipe)"));
  CHECK(stats.out.empty());  // refused before the trace is read
  const CliResult report = cli({"report", results.string(), "--out", fifo});
  CHECK(report.code == 2);
  CHECK(report.err == refusal("--out", fifo, "a FIFO (named pipe)"));
  CHECK(fs::is_fifo(fifo));

  CHECK(cli({"trace", "gen", config, "--out", "/dev/null"}).err ==
        refusal("--out", "/dev/null", "a character device"));
  CHECK(cli({"trace", "gen", config, "--out", link}).err ==
        refusal("--out", link, "a symbolic link"));
  CHECK(fs::is_symlink(link));
  CHECK_FALSE(fs::exists(dir / "target.csv"));
  CHECK(cli({"report", results.string(), "--out", dir.string()}).err ==
        refusal("--out", dir.string(), "a folder"));
  const std::string yaml = (dir / "step.yaml").string();
  REQUIRE(::mkfifo(yaml.c_str(), 0644) == 0);
  CHECK(cli({"calibrate", k_data + "/splitwise_excerpt.csv", "--model", "llama2-70b", "--hardware",
             "h100-80gb", "--tp", "4", "--out", yaml})
            .err == refusal("--out", yaml, "a FIFO (named pipe)"));

  // A regular file is replaced, and no temporary is left beside it.
  const fs::path out = dir / "sub" / "t.csv";
  REQUIRE(cli({"trace", "gen", config, "--out", out.string()}).code == 0);
  REQUIRE(cli({"trace", "gen", config, "--out", out.string(), "--requests", "2"}).code == 0);
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
