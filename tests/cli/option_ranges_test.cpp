// Numeric options are refused outside their range in every subcommand: this walks the command
// table (command_names(), and `trace`'s gen and stats), reads each command's --help, and
// requires every option that takes a value to be either a ranged number (int_option or
// real_option, whose help states the range) or one of the text options listed below. Each
// ranged option is then given values below, above and outside its range
// (docs/errors.md#option-ranges).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <regex>
#include <set>

#include "cli/command_table.h"
#include "tests/support.h"

namespace t_cli_option_ranges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Options whose value is text: a path, a name, an override. (Positional arguments are not
// listed among the options: conventions_test.cpp.)
const std::set<std::string> k_text_options{"catalog-hardware",
                                           "catalog-model",
                                           "check",
                                           "check-step-time",
                                           "compute-dtype",
                                           "export",
                                           "form",
                                           "format",
                                           "hardware",
                                           "input-format",
                                           "label",
                                           "kv-dtype",
                                           "model",
                                           "mlperf",
                                           "model-shape",
                                           "source-hardware",
                                           "source-model",
                                           "out",
                                           "percentiles",
                                           "set",
                                           "weight-dtype"};

struct OptionHelp {
  std::string name;
  bool takes_value = false;
  std::string help;
};

/// The options of `servesim WORDS --help`, one per option with its help text joined.
std::vector<OptionHelp> options_of(const std::vector<std::string>& words) {
  std::vector<std::string> args = words;
  args.push_back("--help");
  const CliResult r = cli(args);
  REQUIRE(r.code == 0);
  // The help is on the option's line, or on the next when the name is long.
  static const std::regex option(R"(^  (?:-\w, |    )--([\w-]+)( (?:arg|[A-Z]+))?(?:\s+(.*))?$)");
  std::vector<OptionHelp> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, option))
      out.push_back({m[1], m[2].matched, m[3]});
    else if (!out.empty() && line.starts_with("      "))
      out.back().help += " " + line.substr(line.find_first_not_of(' '));
  }
  REQUIRE_FALSE(out.empty());
  for (OptionHelp& o : out) o.help = std::regex_replace(o.help, std::regex(" +"), " ");
  return out;
}

/// "an integer from 1 to 4096" or "a number > 0 and <= 9e9 (seconds)" from a help text.
std::string range_of(const std::string& help) {
  size_t at = help.find("(an integer from ");
  if (at == std::string::npos) at = help.find("(a number ");
  if (at == std::string::npos) return {};
  int depth = 0;
  for (size_t i = at; i < help.size(); ++i) {
    depth += help[i] == '(' ? 1 : help[i] == ')' ? -1 : 0;
    if (depth == 0) return help.substr(at + 1, i - at - 1);
  }
  return {};
}

/// Values outside `range`, as a user might type them.
std::vector<std::string> bad_values(const std::string& range) {
  std::vector<std::string> out{"abc", "1x", "nan", "inf", "1e999"};
  std::smatch m;
  if (std::regex_search(range, m, std::regex(R"(^an integer from (-?\d+) to (-?\d+)$)"))) {
    const long long lo = std::stoll(m[1]), hi = std::stoll(m[2]);
    out.push_back(std::to_string(lo - 1));
    out.push_back(hi == std::numeric_limits<long long>::max() ? "9223372036854775808"
                                                              : std::to_string(hi + 1));
    out.push_back("-1");
    out.push_back("1.5");
  } else if (std::regex_search(
                 range, m, std::regex(R"(^a number (from|>) (\S+) (to|and <=) (\S+?)(?: \(|$))"))) {
    const double lo = std::stod(m[2]), hi = std::stod(m[4]);
    out.push_back(m[1] == ">" ? std::string(m[2])
                              : fmt::format("{}", lo - std::max(1.0, std::abs(lo))));
    out.push_back(fmt::format("{}", hi * 2 + 1));
    out.push_back("-1");
  } else {
    FAIL("unreadable range: " << range);
  }
  return out;
}

}  // namespace

TEST_CASE("option ranges: every numeric option of every command states and enforces its range",
          "[cli][option_ranges]") {
  std::vector<std::vector<std::string>> commands;
  for (const CommandLine& cl : command_lines()) {
    std::vector<std::string> words;
    std::istringstream in(cl.command());
    for (std::string w; in >> w;) words.push_back(w);
    commands.push_back(words);
  }
  REQUIRE(commands.size() == 11);
  size_t ranged = 0;
  for (const auto& words : commands) {
    for (const OptionHelp& o : options_of(words)) {
      INFO("servesim " << fmt::format("{}", fmt::join(words, " ")) << " --" << o.name << ": "
                       << o.help);
      if (!o.takes_value) continue;
      const std::string range = range_of(o.help);
      if (range.empty()) {
        CHECK(k_text_options.count(o.name) == 1);  // else: declare it with int_option/real_option
        continue;
      }
      ++ranged;
      for (const std::string& v : bad_values(range)) {
        std::vector<std::string> args = words;
        args.insert(args.end(), {"--" + o.name, v});
        const CliResult r = cli(args);
        INFO("value " << v);
        CHECK(r.code == 2);
        CHECK(r.err == "servesim: error: --" + o.name + " " + v + ": must be " + range + "\n");
      }
    }
  }
  // Every ranged option of every command, the shared ones (cli/sim_options.cpp: --seed,
  // --requests and the three run limits on run, capacity and size) once per command.
  CHECK(ranged == 35);  // 33, run --threads and capacity --min-duration
}

TEST_CASE("option ranges: the messages of the options users meet most", "[cli][option_ranges]") {
  CHECK(cli({"run", "--timeline-requests", "-1"}).err ==
        "servesim: error: --timeline-requests -1: must be an integer from 0 to 1000000000\n");
  CHECK(cli({"size", "x.yaml", "--jobs", "0"}).err ==
        "servesim: error: --jobs 0: must be an integer from 1 to 4096\n");
  CHECK(cli({"run", "--seed", "-1"}).err ==
        "servesim: error: --seed -1: must be an integer from 0 to 9223372036854775807\n");
  CHECK(cli({"run", "--max-wall-time", "-1"}).err ==
        "servesim: error: --max-wall-time -1: must be a number > 0 and <= 1e9 (seconds)\n");
  CHECK(cli({"run", "--max-sim-time", "1e10"}).err ==
        "servesim: error: --max-sim-time 1e10: must be a number > 0 and <= 9e9 (seconds)\n");
  CHECK(cli({"calibrate", "m.csv", "--worst", "-1"}).err ==
        "servesim: error: --worst -1: must be an integer from 0 to 1000\n");
  CHECK(cli({"trace", "stats", "t.csv", "--window-s", "0"}).err ==
        "servesim: error: --window-s 0: must be a number from 1e-9 to 9e9 (seconds)\n");
  CHECK(cli({"trace", "gen", "c.yaml", "--out", "x", "--requests", "-5"}).err ==
        "servesim: error: --requests -5: must be an integer from 1 to 1099511627776\n");
}

}  // namespace t_cli_option_ranges_test
