// Issue 19: `servesim report` refuses result files that are not servesim's output -- too deep,
// too large, of the wrong types, or not regular files -- with a message naming the file and key.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "report/report_data.h"
#include "tests/support.h"

namespace t_report_report_input_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string error_of(const std::filesystem::path& dir) {
  try {
    (void)report_data({dir.string()});
  } catch (const InputError& e) {
    std::string msg = e.what();
    const std::string prefix = dir.string() + "/";
    if (msg.rfind(prefix, 0) == 0) msg.erase(0, prefix.size());
    return msg;
  }
  return "(no error)";
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("report input: deep nesting is refused, not a stack overflow", "[report][hostile]") {
  const auto dir = temp_dir();
  // On main this crashed (the summary is copied and dumped recursively).
  write(dir / "summary.json",
        "{\"x\": " + std::string(200000, '[') + std::string(200000, ']') + "}");
  CHECK(error_of(dir) == "summary.json: nested deeper than 64 levels; not servesim's output");
  write(dir / "summary.json", "{\"x\": " + std::string(60, '[') + std::string(60, ']') + "}");
  CHECK(error_of(dir) == "(no error)");
}

TEST_CASE("report input: a key the page reads must have its type", "[report][hostile]") {
  const auto dir = temp_dir();
  write(dir / "summary.json", R"({"finished": 3, "ttft_s": {"p50": 0.1, "p99": null}})");
  REQUIRE(error_of(dir) == "(no error)");
  // On main these rendered: "abc" as a count, a number where the percentiles go.
  write(dir / "summary.json", R"({"finished": "abc"})");
  CHECK(error_of(dir) == "summary.json: key \"finished\" = \"abc\": must be a number (or null)");
  write(dir / "summary.json", R"({"ttft_s": 5})");
  CHECK(error_of(dir) == "summary.json: key \"ttft_s\" = 5: must be an object (or null)");
  write(dir / "summary.json", R"({"ttft_s": {"p99": [1]}})");
  CHECK(error_of(dir) == "summary.json: key \"ttft_s.p99\" = [1]: must be a number (or null)");
  write(dir / "summary.json", R"({"config": {"scheduler": {"kind": 7}}})");
  CHECK(error_of(dir) ==
        "summary.json: key \"config.scheduler.kind\" = 7: must be a string (or null)");
  write(dir / "summary.json", R"({"kind": "sweep", "slo": {"ttft_ms": "fast"}})");
  write(dir / "points.csv", "point\n0\n");
  CHECK(error_of(dir) ==
        "summary.json: key \"slo.ttft_ms\" = \"fast\": must be a number (or null)");
}

TEST_CASE("report input: only regular files are read", "[report][hostile]") {
  const auto dir = temp_dir();
  std::filesystem::create_directory(dir / "summary.json");
  CHECK(error_of(dir) == "summary.json: not a regular file");
  std::filesystem::remove(dir / "summary.json");
  write(dir / "summary.json", R"({"finished": 1})");
  REQUIRE(mkfifo((dir / "requests.csv").c_str(), 0600) == 0);
  CHECK(error_of(dir) == "requests.csv: not a regular file");  // on main: blocked forever
}

}  // namespace t_report_report_input_test
