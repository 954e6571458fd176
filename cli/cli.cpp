#include "cli/cli.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <iostream>
#include <new>
#include <sstream>

#include "cli/calibrate_cmd.h"
#include "cli/capacity_cmd.h"
#include "cli/cli_options.h"
#include "cli/command_table.h"
#include "cli/completion.h"
#include "cli/explain_cmd.h"
#include "cli/report_cmd.h"
#include "cli/run_cmd.h"
#include "cli/size_cmd.h"
#include "cli/trace_cmd.h"
#include "core/interrupt.h"
#include "core/registry.h"
#include "metrics/memory_budget.h"
#include "models/catalog.h"
#include "models/step_time_model.h"
#include "report/report.h"
#include "schedulers/router.h"
#include "schedulers/scheduler.h"
#include "sim/api_latency.h"
#include "traces/arrival_process.h"
#include "traces/length_dist.h"
#include "traces/workload_source.h"

namespace po = boost::program_options;

namespace servesim {
namespace {

constexpr const char* k_usage_tail = R"(  servesim --help | --version

`servesim COMMAND --help` lists a command's arguments and options. Every command takes the
common options -q/--quiet, --json, --no-progress and -h/--help, and --out is always a folder
(docs/cli.md#conventions). See docs/config.md for every key and docs/metrics.md for every metric.
)";

/// The groups of `servesim list`, in its order.
std::vector<std::pair<std::string, std::vector<std::string>>> list_groups() {
  return {
      {"schedulers", scheduler_names()},
      {"routers", router_names()},
      {"step-time-models", step_time_model_names()},
      {"workload-sources", workload_source_names()},
      {"arrival-kinds", arrival_kind_names()},
      {"length-kinds", length_kind_names()},
      {"kv-policies", kv_policy_names()},
      {"api-engines", api_engine_names()},
      {"models", model_names()},
      {"hardware", hardware_names()},
  };
}

std::vector<std::string> list_group_names() {
  std::vector<std::string> names;
  for (const auto& g : list_groups()) names.push_back(g.first);
  return names;
}

CommandLine list_command_line() {
  CommandLine cl("list", "[GROUP] [options]", "Lists the names each part of a config accepts.");
  cl.positional("group", -1, "[GROUP]",
                fmt::format("what to list: {}", join_names(list_group_names())));
  return cl;
}

int cmd_list(const std::vector<std::string>& args, std::ostream& out) {
  const auto groups = list_groups();
  const std::vector<std::string> names = list_group_names();
  const auto vm = list_command_line().parse(args, out);
  if (!vm) return 0;
  const CommonOptions c = common_options(*vm);
  const auto given = vm->count("group") ? (*vm)["group"].as<std::vector<std::string>>()
                                        : std::vector<std::string>{};
  if (given.size() > 1) throw InputError("list: takes at most one group; see servesim list --help");
  if (!given.empty() && std::find(names.begin(), names.end(), given[0]) == names.end())
    throw InputError(fmt::format("list: unknown group {}{} (valid: {})", quote_input(given[0]),
                                 did_you_mean(given[0], names), join_names(names)));
  // The keys every --json output has (command), then the groups asked for.
  nlohmann::ordered_json j{{"command", "list"}, {"groups", nlohmann::ordered_json::object()}};
  std::ostringstream text;
  for (const auto& [group, members] : groups) {
    if (!given.empty() && given[0] != group) continue;
    j["groups"][group] = members;
    if (given.empty()) text << group << ":";
    for (const auto& m : members)
      text << (given.empty() ? " " : "") << m << (given.empty() ? "" : "\n");
    if (given.empty()) text << "\n";
  }
  if (c.json)
    print_json(out, c, j);
  else if (c.tables())
    out << text.str();
  return 0;
}

/// One subcommand: its name, its command lines (one, or one per second word: `trace stats`,
/// `trace gen`) and what runs it. The table drives dispatch, `servesim --help` (in this order),
/// the "did you mean" of an unknown command, the completion script, the man page and the tests
/// that check every command follows the same conventions; a new command is one file
/// (cli/NAME_cmd.cpp) and one row here.
struct Command {
  const char* name;
  std::vector<CommandLine> (*command_lines)();
  int (*run)(const std::vector<std::string>& args, std::ostream& out,
             const volatile std::sig_atomic_t* interrupt);
};

CommandLine completion_command_line() {
  CommandLine cl("completion", "SHELL [options]",
                 "Prints a completion script: source <(servesim completion bash).");
  cl.positional("shell", 1, "SHELL", "the shell: bash");
  cl.require("shell", "give a shell (bash)");
  return cl;
}

CommandLine man_command_line() {
  return CommandLine("man", "[options]", "Prints the man page (roff): servesim man | man -l -");
}

int cmd_completion(const std::vector<std::string>& args, std::ostream& out,
                   const volatile std::sig_atomic_t*);
int cmd_man(const std::vector<std::string>& args, std::ostream& out,
            const volatile std::sig_atomic_t*);

template <CommandLine (*F)()>
std::vector<CommandLine> one() {
  return {F()};
}

std::vector<CommandLine> trace_lines() {
  return {trace_stats_command_line(), trace_gen_command_line()};
}

// clang-format off
constexpr std::array k_commands{
    Command{"run", &one<run_command_line>, &cmd_run},
    Command{"report", &one<report_command_line>, &cmd_report},
    Command{"list", &one<list_command_line>,
            [](const auto& a, std::ostream& o, const volatile std::sig_atomic_t*) { return cmd_list(a, o); }},
    Command{"explain", &one<explain_command_line>,
            [](const auto& a, std::ostream& o, const volatile std::sig_atomic_t*) { return cmd_explain(a, o); }},
    Command{"calibrate", &one<calibrate_command_line>, &cmd_calibrate},
    Command{"trace", &trace_lines, &cmd_trace},
    Command{"capacity", &one<capacity_command_line>, &cmd_capacity},
    Command{"size", &one<size_command_line>, &cmd_size},
    Command{"completion", &one<completion_command_line>, &cmd_completion},
    Command{"man", &one<man_command_line>, &cmd_man},
};
// clang-format on

constexpr bool commands_unique() {
  for (size_t i = 0; i < k_commands.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (!name_before(k_commands[i].name, k_commands[j].name) &&
          !name_before(k_commands[j].name, k_commands[i].name))
        return false;
  return true;
}
static_assert(commands_unique(), "two commands share a name");

std::vector<CommandLine> all_command_lines() {
  std::vector<CommandLine> all;
  for (const Command& c : k_commands)
    for (CommandLine& cl : c.command_lines()) all.push_back(std::move(cl));
  return all;
}

std::string usage() {
  std::string u = "servesim: a discrete-event simulator of LLM serving\n\nusage:\n";
  for (const CommandLine& cl : all_command_lines())
    u += fmt::format("  servesim {} {}\n", cl.command(), cl.synopsis());
  u += "\ncommands:\n";
  for (const CommandLine& cl : all_command_lines()) {
    u += fmt::format("  {:<13}{}\n", cl.command(), cl.summary());
  }
  return u + "\n" + k_usage_tail;
}

int cmd_completion(const std::vector<std::string>& args, std::ostream& out,
                   const volatile std::sig_atomic_t*) {
  const auto vm = completion_command_line().parse(args, out);
  if (!vm) return 0;
  const CommonOptions c = common_options(*vm);
  const std::string shell = (*vm)["shell"].as<std::string>();
  if (shell != "bash")
    throw InputError(fmt::format("completion: unknown shell {}{} (valid: bash)", quote_input(shell),
                                 did_you_mean(shell, {"bash"})));
  const std::string script = bash_completion(all_command_lines(), list_group_names());
  if (c.json)
    print_json(out, c, {{"command", "completion"}, {"shell", shell}, {"script", script}});
  else if (c.tables())
    out << script;
  return 0;
}

int cmd_man(const std::vector<std::string>& args, std::ostream& out,
            const volatile std::sig_atomic_t*) {
  const auto vm = man_command_line().parse(args, out);
  if (!vm) return 0;
  const CommonOptions c = common_options(*vm);
  const std::string page = man_page(all_command_lines(), SERVESIM_VERSION);
  if (c.json)
    print_json(out, c, {{"command", "man"}, {"page", page}});
  else if (c.tables())
    out << page;
  return 0;
}

}  // namespace

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const Command& c : k_commands) names.emplace_back(c.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<CommandLine> command_lines() { return all_command_lines(); }

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const volatile std::sig_atomic_t* interrupt) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      (args.empty() ? err : out) << usage();
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
      out << "servesim " << SERVESIM_VERSION << "\n";
      return 0;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const Command& c : k_commands)
      if (args[0] == c.name) return c.run(rest, out, interrupt);
    const std::vector<std::string> commands = command_names();
    // Two lines: what is wrong, and where to look (not the whole usage).
    std::string hint = did_you_mean(args[0], commands);  // " (did you mean run?)"
    constexpr size_t k_lead = std::string_view(" (did you mean ").size();
    if (!hint.empty())
      hint = fmt::format("did you mean '{}'? ", hint.substr(k_lead, hint.size() - k_lead - 2));
    throw InputError(
        fmt::format("unknown command '{}'\nhint: {}`servesim --help` lists every command",
                    printable(args[0], 40), hint));
  } catch (const InputError& e) {
    err << "servesim: error: " << e.what() << "\n";
    return 2;
  } catch (const Interrupted& e) {
    err << "servesim: " << e.what() << "\n";
    return 128 + e.signal();
  } catch (const OutOfMemory& e) {  // exit status 3: out of memory (docs/cli.md)
    err << "servesim: error: " << e.what() << "\n";
    return 3;
  } catch (const std::bad_alloc&) {
    // The run's memory is freed by now (the stack is unwound), so the message can be built.
    err << "servesim: error: " << out_of_memory_message(memory_limits(), {}) << "\n";
    return 3;
  } catch (const std::exception& e) {
    err << "servesim: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace servesim
