// One set of options (docs/cli.md#conventions): an option name means one thing on every command
// that has it (the same help, value, default and range), every command that runs simulations
// takes the shared simulation options, and an option renamed because it meant something else
// on another command refuses its old spelling, naming the new one.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/cli_options.h"
#include "cli/command_table.h"
#include "cli/sim_options.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_cli_option_drift_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_configs = SERVESIM_SOURCE_DIR "/configs";

/// What an option is on one command, as help shows it, with its range when it is numeric.
std::string meaning(const CommandLine& cl, const CommandLine::OptionHelp& o,
                    bool with_help = true) {
  std::string m = fmt::format("-{} {}", o.short_name ? o.short_name : ' ', o.value_name);
  if (with_help) m += " default [" + o.default_text + "] help [" + o.help + "]";
  for (const CommandLine::NumericOption& n : cl.numeric_options())
    if (n.name == o.long_name || n.name.rfind(o.long_name + ",", 0) == 0)
      m += " range [" + allowed_range(n) + "]";
  return m;
}

const CommandLine& command(const std::string& name) {
  static const std::vector<CommandLine> all = command_lines();
  for (const CommandLine& cl : all)
    if (cl.command() == name) return cl;
  FAIL("no command " << name);
  throw;
}

bool has_option(const CommandLine& cl, const std::string& name) {
  for (const auto& o : cl.option_help())
    if (o.long_name == name) return true;
  return false;
}

}  // namespace

TEST_CASE("option drift: an option name means the same on every command that has it",
          "[cli][conventions]") {
  // Options whose help and default name what the command reads or writes ("folder for
  // report.html", default servesim-report; "the trace's format"): the same value and meaning,
  // worded for the command.
  const std::set<std::string> worded_per_command{"out", "input-format"};
  std::map<std::string, std::pair<std::string, std::string>> first;  // name -> {command, meaning}
  int shared = 0;
  for (const CommandLine& cl : command_lines())
    for (const CommandLine::OptionHelp& o : cl.option_help()) {
      const std::string m = meaning(cl, o, !worded_per_command.count(o.long_name));
      const auto [it, fresh] = first.emplace(o.long_name, std::make_pair(cl.command(), m));
      if (fresh) continue;
      ++shared;
      INFO("--" << o.long_name << " on " << it->second.first << " and on " << cl.command());
      CHECK(m == it->second.second);
    }
  CHECK(shared > 40);  // the common options alone are shared by every command
}

TEST_CASE("option drift: every command that runs simulations takes the shared options",
          "[cli][conventions]") {
  for (const char* name : {"run", "capacity", "size"}) {
    INFO(name);
    const CommandLine& cl = command(name);
    for (const std::string& o : simulation_option_names()) {
      INFO("--" << o);
      CHECK(has_option(cl, o));
    }
    for (const char* o : {"out", "quiet", "json", "no-progress"}) CHECK(has_option(cl, o));
  }
  // trace gen runs no simulation: the scenario's options, not the run limits.
  for (const std::string& o : scenario_option_names()) CHECK(has_option(command("trace gen"), o));
  CHECK_FALSE(has_option(command("trace gen"), "max-queued"));
  // --percentiles and --export are shared too (of the run at the capacity, per sweep point);
  // trace gen runs nothing to take them from.
  for (const char* o : {"percentiles", "export"}) {
    CHECK(std::count(simulation_option_names().begin(), simulation_option_names().end(), o) == 1);
    CHECK_FALSE(has_option(command("trace gen"), o));
  }
  // A --seed on size reaches the base scenario like a --set seed=N.
  const CliResult seeded =
      cli({"size", k_configs + "/sweeps/sizing-small.yaml", "--seed", "7", "--dry-run", "--json"});
  CHECK(seeded.code == 0);
  CHECK(cli({"size", "x.yaml", "--seed", "-1"}).err ==
        "servesim: error: --seed -1: must be an integer from 0 to 9223372036854775807\n");
  // --requests on a trace workload is refused on run as on trace gen.
  CHECK_THAT(cli({"run", k_configs + "/examples/tiny-trace.yaml", "--requests", "5"}).err,
             Catch::Contains("--requests: ") && Catch::Contains("has no workload.synthetic"));
}

TEST_CASE("option drift: a renamed option's old spelling names the new one", "[cli][conventions]") {
  for (const CommandLine& cl : command_lines())
    for (const auto& [old_name, new_name] : cl.renamed_options()) {
      INFO(cl.command() << " --" << old_name);
      CHECK(has_option(cl, new_name));
      CHECK_FALSE(has_option(cl, old_name));
    }
  CHECK(command("calibrate").renamed_options().size() == 5);
  const CliResult r = cli({"calibrate", "m.csv", "--model", "llama"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "servesim: error: calibrate: --model is now --source-model; see servesim calibrate "
        "--help\n");
  CHECK_THAT(cli({"trace", "stats", "t.csv", "--format=csv"}).err,
             Catch::Contains("trace stats: --format is now --input-format"));
}

TEST_CASE("option drift: list --json has the keys every --json output has", "[cli]") {
  const CliResult r = cli({"list", "--json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("command") == "list");
  CHECK(j.at("groups").at("schedulers").size() > 3);
  const auto one = nlohmann::json::parse(cli({"list", "routers", "--json"}).out);
  CHECK(one.at("groups").size() == 1);
}

TEST_CASE("option drift: trace stats suggests its own --sort for an unsorted trace", "[cli]") {
  const std::string path = write_temp("unsorted.csv",
                                      "arrival_s,prompt_tokens,output_tokens\n"
                                      "2.0,10,5\n1.0,10,5\n");
  const CliResult r = cli({"trace", "stats", path});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("(--sort sorts the trace in memory)"));
  CHECK(cli({"trace", "stats", path, "--sort", "-q"}).code == 0);
}

}  // namespace t_cli_option_drift_test
