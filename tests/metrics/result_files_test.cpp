// Result folders under concurrent and interrupted use: one command at a time holds a folder's
// lock, temporaries are unique to the process and the write, and the next command into a folder
// removes what a killed one left (docs/errors.md#concurrent-use-of-one-output-folder).
#include "metrics/result_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/support.h"

namespace t_metrics_result_files_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// A small run: 5 requests, a few steps.
const char* k_scenario = R"(workload:
  synthetic:
    requests: 5
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 3}
step_time: {kind: linear, base_ms: 1}
scheduler: {kind: continuous, max_num_seqs: 4}
kv: {policy: paged, capacity_tokens: 1000}
)";

}  // namespace

TEST_CASE("result_files: a second command into a busy folder is refused with its name",
          "[metrics][result_files]") {
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", k_scenario);
  {
    ResultFiles busy(dir.string());  // another command holds the folder
    CHECK(fs::exists(dir / ResultFiles::k_lock_name));
    CHECK_THROWS_WITH(ResultFiles(dir.string()),
                      "--out " + dir.string() +
                          ": another servesim command is writing results into this folder (it "
                          "holds " +
                          (dir / ".servesim.lock").string() +
                          "); wait for it to finish or give another --out");
    const CliResult r = cli({"run", config, "--out", dir.string(), "-q"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err,
               Catch::Contains("another servesim command is writing results into this folder"));
    CHECK(cli({"capacity", config, "--out", dir.string(), "-q"}).code == 2);
    CHECK_FALSE(fs::exists(dir / "summary.json"));  // the refused run wrote nothing
  }
  // Released: the lock file goes with the lock, and the folder takes a run again.
  CHECK(names_in(dir).empty());
  REQUIRE(cli({"run", config, "--out", dir.string(), "-q"}).code == 0);
  CHECK(names_in(dir) == std::set<std::string>{"requests.csv", "summary.json"});
}

TEST_CASE("result_files: temporaries are named per process and per write",
          "[metrics][result_files]") {
  const std::string a = temporary_name("requests.csv"), b = temporary_name("requests.csv");
  CHECK(a != b);
  CHECK_THAT(a, Catch::StartsWith(".requests.csv." + std::to_string(getpid()) + "-"));
  CHECK_THAT(a, Catch::EndsWith(".partial"));
  CHECK(temporary_owner(a) == getpid());
  CHECK(temporary_owner(".requests.csv.partial") == -1);  // an older servesim's fixed name
  CHECK(temporary_owner("requests.csv") == 0);
  CHECK(temporary_owner(".hidden") == 0);
  // While a run writes, its files are temporaries of this process, never the fixed names.
  const fs::path dir = temp_dir();
  ResultFiles files(dir.string());
  files.open("summary.json") << "{}";
  bool found = false;
  for (const std::string& n : names_in(dir)) {
    CHECK(n != ".summary.json.partial");
    if (temporary_owner(n) == getpid()) found = true;
  }
  CHECK(found);
}

TEST_CASE("result_files: the next command removes temporaries a killed one left",
          "[metrics][result_files]") {
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", k_scenario);
  // A killed run of an older servesim, one of this servesim whose process is gone (pids stop
  // far below 2^31), and a live writer's (this process) that must be kept.
  std::ofstream(dir / ".requests.csv.partial") << "old";
  std::ofstream(dir / ".summary.json.2147483646-0badcafe.partial") << "dead";
  const std::string live = ".x.csv." + std::to_string(getpid()) + "-00000001.partial";
  std::ofstream(dir / live) << "live";
  std::ofstream(dir / ".servesim.lock");  // left by a killed run: nobody holds it
  REQUIRE(cli({"run", config, "--out", dir.string(), "-q"}).code == 0);
  CHECK(names_in(dir) == std::set<std::string>{live, "requests.csv", "summary.json"});
}

TEST_CASE("result_files: a result name that is not a regular file is refused, not replaced",
          "[metrics][result_files]") {
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", k_scenario);
  REQUIRE(::mkfifo((dir / "summary.json").c_str(), 0644) == 0);
  const CliResult r = cli({"run", config, "--out", dir.string(), "-q"});
  CHECK(r.code == 2);
  CHECK(r.err == "servesim: error: --out " + (dir / "summary.json").string() +
                     ": is a FIFO (named pipe); servesim writes an output only as a regular "
                     "file, which it creates or replaces (give a new path or an existing regular "
                     "file)\n");
  CHECK(fs::is_fifo(dir / "summary.json"));
  fs::remove(dir / "summary.json");
  fs::create_symlink(dir / "elsewhere.csv", dir / "requests.csv");
  CHECK_THAT(cli({"run", config, "--out", dir.string(), "-q"}).err,
             Catch::Contains("requests.csv: is a symbolic link"));
  CHECK(fs::is_symlink(dir / "requests.csv"));
  CHECK_FALSE(fs::exists(dir / "elsewhere.csv"));
}

TEST_CASE("result_files: the marker is renamed last, so a failed rename leaves no marker",
          "[metrics][result_files]") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "summary.json") << "old";  // an earlier set's marker
  {
    ResultFiles files(dir.string());
    files.open("summary.json") << "{}";  // opened first, renamed last all the same
    files.open("points.csv") << "a\n";
    // points.csv's name became a folder after it was opened: its rename is refused.
    fs::create_directory(dir / "points.csv");
    CHECK_THROWS_WITH(files.commit(), Catch::Contains("points.csv: is a folder"));
  }
  // No summary.json: neither the new one nor the old one, whose set was being replaced.
  CHECK(names_in(dir) == std::set<std::string>{"points.csv"});
  CHECK(fs::is_directory(dir / "points.csv"));
}

TEST_CASE("result_files: a dropped file goes before the marker, and retract takes the set back",
          "[metrics][result_files]") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "steps.csv") << "an earlier run's";
  std::ofstream(dir / "capacity.json") << "old";
  ResultFiles files(dir.string(), "capacity.json");
  files.open("capacity.json") << "{}";
  files.open("summary.json") << "{}";
  files.drop("steps.csv");
  files.commit();
  CHECK(names_in(dir) == std::set<std::string>{".servesim.lock", "capacity.json", "summary.json"});
  files.retract();  // a step after the commit failed
  CHECK(names_in(dir) == std::set<std::string>{".servesim.lock"});
}

TEST_CASE("result_files: run --report whose report cannot be written keeps no summary.json",
          "[metrics][result_files]") {
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", k_scenario);
  REQUIRE(::mkfifo((dir / "report.html").c_str(), 0644) == 0);
  // The FIFO is dropped (an earlier run's file) only if it is a regular file: report.html's
  // writer then refuses it after the commit, and the committed files are taken back.
  const CliResult r = cli({"run", config, "--out", dir.string(), "--report", "-q"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("report.html: is a FIFO"));
  CHECK(names_in(dir) == std::set<std::string>{"report.html"});
}

}  // namespace t_metrics_result_files_test
