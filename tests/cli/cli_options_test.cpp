// The command-line part every subcommand shares (sim/cli_options.h): messages, --help, --set.
#include "cli/cli_options.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "cli/command_table.h"
#include "tests/support.h"

namespace t_cli_cli_options_test {

using namespace servesim;
using namespace servesim::test;
namespace po = boost::program_options;

namespace {

/// A command with one required positional FILE, --set, --seed, --quiet and --count N.
CommandLine file_command() {
  CommandLine cl("demo", "FILE [options]");
  cl.positional("file", 1, "FILE", "the file");
  cl.options()("count", po::value<int>()->default_value(3), "how many")(
      "ratio", po::value<double>()->default_value(0.9), "a share");
  cl.set_option().seed_option();
  cl.require("file", "give a file");
  return cl;
}

/// The InputError message of parsing `args` with `cl`, or "(no error)".
std::string parse_error(const CommandLine& cl, const std::vector<std::string>& args) {
  std::ostringstream out;
  try {
    (void)cl.parse(args, out);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

/// The InputError message of overrides() for the given --set values, or "(no error)".
std::string set_error(const std::vector<std::string>& sets) {
  std::vector<std::string> args{"f.csv"};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  std::ostringstream out;
  try {
    (void)overrides(*file_command().parse(args, out));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("cli_options: options, positionals and defaults are read", "[cli]") {
  std::ostringstream out;
  const auto vm = file_command().parse({"f.csv", "-q", "--set", "a.b=1", "--seed=9"}, out);
  REQUIRE(vm);
  CHECK(out.str() == "");
  CHECK((*vm)["file"].as<std::string>() == "f.csv");
  CHECK((*vm)["count"].as<int>() == 3);
  CHECK((*vm)["quiet"].as<bool>());
  CHECK(overrides(*vm) == std::vector<std::string>{"a.b=1", "seed=9"});
  // No --set, no --seed: no overrides; --quiet defaults to false.
  const auto plain = file_command().parse({"--file", "g.csv", "--count", "5"}, out);
  REQUIRE(plain);
  CHECK((*plain)["count"].as<int>() == 5);
  CHECK_FALSE((*plain)["quiet"].as<bool>());
  CHECK(overrides(*plain).empty());
}

TEST_CASE("cli_options: bad command lines name the command and point at --help", "[cli]") {
  const CommandLine cl = file_command();
  CHECK(parse_error(cl, {"f.csv", "--bogus"}) ==
        "demo: unrecognised option '--bogus'; see servesim demo --help");
  CHECK(parse_error(cl, {}) == "demo: give a file; see servesim demo --help");
  CHECK(parse_error(cl, {"--count", "2"}) == "demo: give a file; see servesim demo --help");
  CHECK_THAT(parse_error(cl, {"f.csv", "g.csv"}),
             Catch::StartsWith("demo: too many positional options") &&
                 Catch::EndsWith("; see servesim demo --help"));
  CHECK_THAT(parse_error(cl, {"f.csv", "--count", "many"}),
             Catch::StartsWith("demo: the argument ('many') for option '--count' is invalid"));
  CHECK_THAT(parse_error(cl, {"f.csv", "--count"}),
             Catch::StartsWith("demo: the required argument for option '--count' is missing"));
  // Required options are checked in the order given, each with its own message.
  CommandLine two("trace gen", "CONFIG --out FILE");
  two.positional("config", 1, "CONFIG", "");
  two.options()("out", po::value<std::string>(), "");
  two.require("config", "give a config").require("out", "give --out");
  CHECK(parse_error(two, {}) == "trace gen: give a config; see servesim trace gen --help");
  CHECK(parse_error(two, {"c.yaml"}) == "trace gen: give --out; see servesim trace gen --help");
  CHECK(parse_error(two, {"c.yaml", "--out", "t.csv"}) == "(no error)");
}

TEST_CASE("cli_options: --set values are checked for form before any file is read", "[cli]") {
  CHECK(set_error({"a.b=1", "c={x: 2}"}) == "(no error)");
  CHECK(set_error({"novalue"}) == "--set novalue: expected key.path=value");
  CHECK(set_error({"=1"}) == "--set =1: expected key.path=value");
  CHECK(set_error({"a..b=1"}) == "--set a..b=1: empty key in path");
  CHECK(set_error({"a={x: 1"}) ==
        "--set a={x: 1: value is not valid YAML: end of map flow not found");
  // A path through an earlier override's scalar fails here as it would in the config.
  CHECK(set_error({"a=1", "a.b=2"}) == "--set a.b=2: a is \"1\", not a map");
  // Whether a path fits the config is the config's business: this one is only malformed there.
  CHECK(set_error({"scheduler.kind.x=1"}) == "(no error)");

  // From the command line: the bad --set is reported, not the missing config file.
  const CliResult r = cli({"run", "/nonexistent.yaml", "--set", "novalue"});
  CHECK(r.code == 2);
  CHECK(r.err == "servesim: error: --set novalue: expected key.path=value\n");
  const CliResult gen = cli({"trace", "gen", "/nonexistent.yaml", "--out", "x", "--set", "a."});
  CHECK(gen.code == 2);
  CHECK_THAT(gen.err, Catch::Contains("--set a.: expected key.path=value"));
}

TEST_CASE("cli_options: every command exits 2 on an unknown option, naming both", "[cli]") {
  for (const CommandLine& cl : command_lines()) {
    const std::string command = cl.command();
    INFO(command);
    std::vector<std::string> args;
    std::istringstream words(command);
    for (std::string w; words >> w;) args.push_back(w);
    args.push_back("--bogus");
    const CliResult r = cli(args);
    CHECK(r.code == 2);
    CHECK(r.out == "");
    CHECK(r.err == "servesim: error: " + command +
                       ": unrecognised option '--bogus'; see servesim " + command + " --help\n");
  }
}

TEST_CASE("cli_options: missing positionals keep each command's message", "[cli]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"calibrate"}, "calibrate: give a measurement file or profile folder"},
      {{"capacity", "-q"}, "capacity: give a scenario file with an slo section"},
      {{"size", "--dry-run"}, "size: give a sweep file (docs/sizing.md)"},
      {{"report", "--out", "r"}, "report: give at least one result directory"},
      {{"trace", "stats"}, "trace stats: give a trace file"},
      {{"trace", "gen", "--out", "t"}, "trace gen: give a scenario config"},
      {{"completion"}, "completion: give a shell (bash)"},
  };
  for (const auto& [args, message] : cases) {
    INFO(message);
    const CliResult r = cli(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.err,
               Catch::StartsWith("servesim: error: " + message) && Catch::EndsWith("--help\n"));
  }
}

TEST_CASE("cli_options: --help prints the command's usage and options and exits 0", "[cli]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"run", "--help"}, "--max-wall-time"},
      {{"list", "-h"}, "kv-policies"},
      {{"calibrate", "--help"}, "--folds"},
      {{"explain", "--help"}, "--measured-mb"},
      {{"capacity", "--help"}, "--min-attainment"},
      {{"size", "--help"}, "--dry-run"},
      {{"report", "--help"}, "--out"},
      {{"trace", "stats", "--help"}, "--window-s"},
      {{"trace", "gen", "--help"}, "--requests"},
  };
  for (const auto& [args, option] : cases) {
    std::string command;
    for (const auto& w : args)
      if (w[0] != '-') command += (command.empty() ? "" : " ") + w;
    INFO(command);
    const CliResult r = cli(args);
    CHECK(r.code == 0);
    CHECK(r.err == "");
    CHECK_THAT(r.out, Catch::StartsWith("usage: servesim " + command + " "));
    CHECK_THAT(r.out, Catch::Contains(option));
  }
  // --help wins over a missing positional and runs nothing.
  const std::filesystem::path dir = temp_dir() / "never";
  const CliResult r = cli({"run", "--out", dir.string(), "--help"});
  CHECK(r.code == 0);
  CHECK_FALSE(std::filesystem::exists(dir));
  CHECK(cli({"trace", "--help"}).code == 0);
  // The help: usage, the positional argument apart from the options, the common options and
  // clean defaults (conventions_test.cpp checks every command of the table).
  CHECK(
      file_command().help() ==
      "usage: servesim demo FILE [options]\n"
      "\n"
      "arguments:\n"
      "  FILE               the file\n"
      "\n"
      "options:\n"
      "      --count arg    how many (default 3)\n"
      "      --ratio arg    a share (default 0.9)\n"
      "      --set arg      override key.path=value (a YAML value), repeatable, applied in order\n"
      "      --seed arg     override the scenario's seed (applied after --set) (an integer "
      "from 0 to\n"
      "                     9223372036854775807)\n"
      "\n"
      "common options (every command takes them; docs/cli.md#conventions):\n"
      "  -h, --help         print this help and exit\n"
      "  -q, --quiet        print nothing on stdout on success, and no progress (result files "
      "are still\n"
      "                     written)\n"
      "      --json         print the results as one JSON document on stdout instead of the "
      "tables\n"
      "      --no-progress  show no progress on stderr (commands that show none accept it "
      "too)\n");
}

}  // namespace t_cli_cli_options_test
