// Every subcommand follows the same conventions (docs/cli.md#conventions). The tests walk the
// command table (command_lines(): every command, `trace stats` and `trace gen` each): the
// common options with one help text, positional arguments in the usage line and not among the
// options, clean defaults, --out always a folder, -q printing nothing while the files are still
// written, --json printing one JSON document, --no-progress accepted; an unknown command's two
// lines; the man page naming every command and option.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "cli/command_table.h"
#include "cli/completion.h"
#include "metrics/exports.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_cli_conventions_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const std::string k_data = SERVESIM_SOURCE_DIR "/tests/data";

std::vector<std::string> words_of(const std::string& command) {
  std::vector<std::string> words;
  std::istringstream in(command);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

/// The options of a printed --help: long name -> its help text, continuation lines joined.
std::map<std::string, std::string> printed_options(const std::string& help) {
  // The help is on the option's line, or on the next when the name is long.
  static const std::regex option(
      R"(^  (?:-\w, |    )--([\w-]+)(?: (?:arg|[A-Z.]+))?(?:\s+(.*))?$)");
  std::map<std::string, std::string> out;
  std::string last;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, option)) {
      last = m[1];
      out[last] = m[2];
    } else if (!last.empty() && line.starts_with("      ") &&
               line.find_first_not_of(' ') != std::string::npos) {
      out[last] += (out[last].empty() ? "" : " ") + line.substr(line.find_first_not_of(' '));
    } else {
      last.clear();
    }
  }
  return out;
}

/// A small real invocation of every command of the table (the folder `dir` holds its inputs and
/// outputs), keyed by the command's words; "out" names the --out folder it writes, if any.
struct Invocation {
  std::vector<std::string> args;
  std::string out;                 ///< the --out folder given in args, "" if none
  std::vector<std::string> files;  ///< what it writes there
};

std::map<std::string, Invocation> invocations(const fs::path& dir) {
  const std::string scenario = (dir / "s.yaml").string();
  std::ofstream(scenario) << R"(workload:
  synthetic:
    requests: 20
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 1}
    output_tokens: {kind: fixed, value: 1}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 1}
kv: {policy: paged, capacity_tokens: 1000, block_size: 1}
slo: {ttft_ms: 10}
)";
  std::ofstream(dir / "sweep.yaml") << "base: s.yaml\nslo: {ttft_ms: 500}\naxes:\n"
                                       "  replicas: [1, 2]\n";
  // A result folder for `report` to read, written once up front.
  REQUIRE(cli({"run", scenario, "--out", (dir / "result").string(), "-q"}).code == 0);
  auto out = [&](const std::string& name) { return (dir / name).string(); };
  return {
      {"run",
       {{"run", scenario, "--out", out("run")}, out("run"), {"summary.json", "requests.csv"}}},
      {"report",
       {{"report", (dir / "result").string(), "--out", out("report")},
        out("report"),
        {"report.html"}}},
      {"list", {{"list", "hardware"}, "", {}}},
      {"explain", {{"explain", "--model", "llama-3.1-8b", "--hardware", "h100"}, "", {}}},
      {"calibrate",
       {{"calibrate", k_data + "/splitwise_excerpt.csv", "--source-model", "llama2-70b",
         "--source-hardware", "h100-80gb", "--source-tp", "4", "--out", out("calibrate")},
        out("calibrate"),
        {"step_time.yaml"}}},
      {"trace stats",
       {{"trace", "stats", k_data + "/azure_conv_2023_excerpt.csv", "--out", out("stats")},
        out("stats"),
        {"trace_stats.json"}}},
      {"trace gen",
       {{"trace", "gen", scenario, "--out", out("gen"), "--requests", "5"},
        out("gen"),
        {"trace.csv"}}},
      {"capacity",
       {{"capacity", scenario, "--out", out("capacity"), "--tolerance", "0.2"},
        out("capacity"),
        {"capacity.json", "summary.json"}}},
      {"size",
       {{"size", (dir / "sweep.yaml").string(), "--out", out("size"), "-j", "1"},
        out("size"),
        {"points.csv", "summary.json"}}},
      {"completion", {{"completion", "bash"}, "", {}}},
      {"man", {{"man"}, "", {}}},
  };
}

}  // namespace

TEST_CASE("conventions: every command's --help shows the common options the same way",
          "[cli][conventions]") {
  const std::vector<CommandLine> lines = command_lines();
  REQUIRE(lines.size() == 11);
  const std::map<std::string, std::string> common{{"help", k_help_help},
                                                  {"quiet", k_quiet_help},
                                                  {"json", k_json_help},
                                                  {"no-progress", k_no_progress_help}};
  for (const CommandLine& cl : lines) {
    INFO("servesim " << cl.command());
    std::vector<std::string> args = words_of(cl.command());
    args.push_back("--help");
    const CliResult r = cli(args);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const std::string usage = r.out.substr(0, r.out.find('\n'));
    CHECK(usage == "usage: servesim " + cl.command() + " " + cl.synopsis());
    const std::map<std::string, std::string> printed = printed_options(r.out);
    for (const auto& [name, help] : common) {
      REQUIRE(printed.count(name) == 1);
      CHECK(printed.at(name) == help);
    }
    CHECK_THAT(r.out, Catch::Contains("  -q, --quiet ") && Catch::Contains("  -h, --help "));
    // Positional arguments: in the usage line and under "arguments", never as an option.
    if (const auto& p = cl.positional_argument()) {
      CHECK_THAT(usage, Catch::Contains(" " + p->metavar + " "));
      CHECK_THAT(r.out, Catch::Contains("\narguments:\n  " + p->metavar + " "));
      CHECK(printed.count(p->name) == 0);
      CHECK_THAT(r.out, !Catch::Contains("--" + p->name + " "));
    }
    // Defaults read as people write them.
    CHECK_THAT(r.out, !Catch::Contains("(="));
    CHECK_FALSE(std::regex_search(r.out, std::regex(R"(\.\d*0{6,}\d)")));
    // --out, where a command has it, is a folder.
    if (printed.count("out")) {
      CHECK_THAT(r.out, Catch::Contains("  -o, --out DIR "));
      CHECK_THAT(printed.at("out"), Catch::StartsWith("folder for "));
    }
    // The option list the completion script and the man page read is the printed one.
    std::set<std::string> names;
    for (const CommandLine::OptionHelp& o : cl.option_help()) names.insert(o.long_name);
    std::set<std::string> shown;
    for (const auto& [name, help] : printed) shown.insert(name);
    CHECK(names == shown);
  }
  // A default in help: 0.9, not 0.90000000000000002; a number's text as given otherwise.
  CHECK(default_text("0.90000000000000002") == "0.9");
  CHECK(default_text("0.01") == "0.01");
  CHECK(default_text("auto") == "auto");
  CHECK(default_text("2048") == "2048");
  CHECK_THAT(cli({"explain", "--help"}).out, Catch::Contains("(default 0.9)"));
}

TEST_CASE("conventions: every command runs with --json, -q and --no-progress",
          "[cli][conventions]") {
  const fs::path dir = temp_dir();
  const std::map<std::string, Invocation> all = invocations(dir);
  for (const CommandLine& cl : command_lines()) {
    INFO("servesim " << cl.command());
    REQUIRE(all.count(cl.command()) == 1);  // a new command needs a row above
    const Invocation& inv = all.at(cl.command());
    // --json: one JSON object on stdout, naming the command and the files it wrote.
    std::vector<std::string> args = inv.args;
    args.insert(args.end(), {"--json", "--no-progress"});
    const CliResult j = cli(args);
    REQUIRE(j.code == 0);
    CHECK(j.err.empty());
    nlohmann::json doc;
    REQUIRE_NOTHROW(doc = nlohmann::json::parse(j.out));
    REQUIRE(doc.is_object());
    CHECK(doc.at("command") == cl.command());
    for (const std::string& f : inv.files) {
      CHECK(fs::is_regular_file(fs::path(inv.out) / f));
      CHECK(std::find(doc.at("files").begin(), doc.at("files").end(),
                      (fs::path(inv.out) / f).string()) != doc.at("files").end());
    }
    // -q: nothing on stdout, the same files written again.
    for (const std::string& f : inv.files) fs::remove(fs::path(inv.out) / f);
    args = inv.args;
    args.push_back("-q");
    const CliResult q = cli(args);
    CHECK(q.code == 0);
    CHECK(q.out.empty());
    CHECK(q.err.empty());
    for (const std::string& f : inv.files) CHECK(fs::is_regular_file(fs::path(inv.out) / f));
    // Without either: the tables.
    args = inv.args;
    args.push_back("--no-progress");
    const CliResult t = cli(args);
    CHECK(t.code == 0);
    CHECK_FALSE(t.out.empty());
    CHECK_THROWS(nlohmann::json::parse(t.out));
  }
  // Without --out, calibrate and trace stats write nothing; --json still prints the results.
  const CliResult stats =
      cli({"trace", "stats", k_data + "/azure_conv_2023_excerpt.csv", "--json"});
  REQUIRE(stats.code == 0);
  const auto s = nlohmann::json::parse(stats.out);
  CHECK(s.at("files").empty());
  CHECK(s.at("stats").at("requests").get<int64_t>() > 0);
}

TEST_CASE("conventions: --out is a folder in every command that writes files",
          "[cli][conventions]") {
  const fs::path dir = temp_dir();
  const std::map<std::string, Invocation> all = invocations(dir);
  const std::string file = write_temp("plain.txt", "x");
  size_t checked = 0;
  for (const auto& [command, inv] : all) {
    if (inv.out.empty()) continue;
    INFO("servesim " << command);
    ++checked;
    for (const std::string& bad :
         {file, (dir / "new.html").string(), (dir / "n.yaml").string(), (dir / "n.csv").string(),
          (dir / "n.JSON").string(), (dir / "n.yml").string()}) {
      INFO("--out " << bad);
      std::vector<std::string> args = inv.args;
      *std::find(args.begin(), args.end(), inv.out) = bad;
      const CliResult r = cli(args);
      CHECK(r.code == 2);
      CHECK(r.out.empty());
      CHECK_THAT(r.err, Catch::StartsWith("servesim: error: --out ") &&
                            Catch::Contains("--out is a folder in every subcommand: " + command +
                                            " writes DIR/" + inv.files.front()));
      if (bad != file) CHECK_FALSE(fs::exists(bad));
    }
  }
  CHECK(checked == 7);
  // The message as a user meets it.
  CHECK(cli({"report", (dir / "result").string(), "--out", "r.html"}).err ==
        "servesim: error: --out \"r.html\": names a html file; --out is a folder in every "
        "subcommand: report writes DIR/report.html (docs/cli.md#conventions)\n");
  // An existing folder whose name has a dot is fine.
  fs::create_directories(dir / "reports.html");
  CHECK(cli({"report", (dir / "result").string(), "--out", (dir / "reports.html").string(), "-q"})
            .code == 0);
  CHECK(fs::is_regular_file(dir / "reports.html" / "report.html"));
}

TEST_CASE("conventions: an unknown command is an error with a one-line hint",
          "[cli][conventions]") {
  const CliResult r = cli({"rnu"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "servesim: error: unknown command 'rnu'\n"
        "hint: did you mean 'run'? `servesim --help` lists every command\n");
  const CliResult far = cli({"frobnicate", "--out", "x"});
  CHECK(far.code == 2);
  CHECK(far.err ==
        "servesim: error: unknown command 'frobnicate'\n"
        "hint: `servesim --help` lists every command\n");
  CHECK(cli({"trace", "stat"}).err ==
        "servesim: error: trace: unknown subcommand \"stat\" (did you mean stats?) (valid: gen, "
        "stats)\n");
}

TEST_CASE("conventions: run --help lists every export format of the registry",
          "[cli][conventions]") {
  const CliResult r = cli({"run", "--help"});
  std::string help = printed_options(r.out).at("export");
  for (const ExportFormat& f : export_formats())
    CHECK_THAT(help, Catch::Contains(fmt::format("{} ({}: {})", f.name, f.file, f.what)));
}

TEST_CASE("conventions: the man page names every command, argument and option",
          "[cli][conventions]") {
  const CliResult r = cli({"man"});
  REQUIRE(r.code == 0);
  // roff's escapes back to text: \- is '-', \fB \fI \fR change the font.
  std::string page = std::regex_replace(r.out, std::regex(R"(\\-)"), "-");
  page = std::regex_replace(page, std::regex(R"(\\f[BIR])"), "");
  CHECK_THAT(page, Catch::StartsWith(".\\\" servesim.1") && Catch::Contains("\n.TH SERVESIM 1 "));
  for (const char* section :
       {".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", ".SH COMMON OPTIONS", ".SH EXIT STATUS"})
    CHECK_THAT(page, Catch::Contains(std::string("\n") + section + "\n"));
  for (const CommandLine& cl : command_lines()) {
    INFO(cl.command());
    CHECK_THAT(page,
               Catch::Contains(".SS \"servesim " + cl.command() + " " + cl.synopsis() + "\""));
    if (const auto& p = cl.positional_argument()) CHECK_THAT(page, Catch::Contains(p->metavar));
    for (const CommandLine::OptionHelp& o : cl.option_help()) {
      CHECK_THAT(page,
                 Catch::Contains(
                     ".TP\n" + (o.short_name ? fmt::format("-{}, ", o.short_name) : std::string()) +
                     "--" + o.long_name));
    }
  }
  for (const char* status : {"\n0\n", "\n1\n", "\n2\n", "\n128 + N\n"})
    CHECK_THAT(page, Catch::Contains(status));
  // No line starts with a stray control character or a lone quote.
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '\'') FAIL("line starts with a quote: " << line);
}

TEST_CASE("conventions: the completion script knows every command and option",
          "[cli][conventions]") {
  const CliResult r = cli({"completion", "bash"});
  REQUIRE(r.code == 0);
  for (const std::string& c : command_names()) CHECK_THAT(r.out, Catch::Contains(" " + c));
  for (const CommandLine& cl : command_lines())
    for (const CommandLine::OptionHelp& o : cl.option_help())
      CHECK_THAT(r.out, Catch::Contains("--" + o.long_name));
  CHECK_THAT(r.out, Catch::EndsWith("complete -o filenames -F _servesim servesim\n"));
  CHECK(cli({"completion", "zsh"}).err ==
        "servesim: error: completion: unknown shell \"zsh\" (did you mean bash?) (valid: bash)\n");
  CHECK(cli({"completion"}).code == 2);
}

}  // namespace t_cli_conventions_test
