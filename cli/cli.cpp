#include "cli/cli.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <filesystem>
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
#include "cli/run_extras.h"
#include "cli/sim_options.h"
#include "cli/size_cmd.h"
#include "cli/trace_cmd.h"
#include "core/interrupt.h"
#include "core/registry.h"
#include "metrics/exports.h"
#include "metrics/memory_budget.h"
#include "metrics/output.h"
#include "metrics/run_scenario.h"
#include "models/catalog.h"
#include "models/step_time_model.h"
#include "report/report.h"
#include "schedulers/router.h"
#include "schedulers/scheduler.h"
#include "sim/parallel_mpi.h"
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

/// What `servesim run` was asked to do, read from its command line and checked.
struct RunRequest {
  std::shared_ptr<Document> doc;  ///< the config with every --set and --seed applied
  std::string dir;                ///< --out
  CommonOptions common;
  bool steps = false;  ///< steps.csv: --steps or --report
  RunOptions options;  ///< check, limits and no_requests_csv; the streams are opened later
  RunExtrasOptions extras;
  std::vector<double> percentiles;           ///< --percentiles; empty: not given
  std::vector<const ExportFormat*> exports;  ///< --export, each once
};

CommandLine run_command_line() {
  CommandLine cl(
      "run", "[CONFIG.yaml] [options]",
      "Runs a scenario (by default configs/default.yaml, embedded) into the --out folder.");
  cl.positional("config", 1, "[CONFIG.yaml]", "scenario YAML (default: the embedded default)");
  cl.out_option("servesim-out",
                "summary.json, requests.csv and the files the options below add (steps.csv, "
                "timeline.json, report.html, the exports)");
  add_simulation_options(cl);
  // clang-format off
  cl.options()
      ("check", po::bool_switch(), "verify the engine's invariants at every step")
      ("no-requests-csv", po::bool_switch(), "write summary.json only (sweeps, very long runs)")
      ("steps", po::bool_switch(), "also write steps.csv: one row per step (shape, KV, queue, bound)")
      ("timeline", po::bool_switch(), "also write timeline.json (Chrome trace: Perfetto, chrome://tracing)")
      ("report", po::bool_switch(), "also write steps.csv and report.html (servesim report)");
  // clang-format on
  cl.int_option("timeline-requests", 0, 1'000'000'000,
                "requests with id below N get a track in timeline.json", 1000);
  cl.int_option("threads", 0, 4096,
                "run a cluster's replicas on N threads (the parallel engine, same results; "
                "docs/cluster.md#parallel); 0: the sequential engine",
                0);
  return cl;
}

/// The config file (or the embedded default) with the overrides applied, in that order.
std::shared_ptr<Document> run_document(const po::variables_map& vm) {
  const std::vector<std::string> sets = overrides(vm);  // checked before any file is read
  std::shared_ptr<Document> doc =
      vm.count("config")
          ? Document::load_file(vm["config"].as<std::string>())
          : std::make_shared<Document>(k_default_scenario_yaml, "<default scenario>");
  for (const auto& a : sets) doc->apply_override(a);
  apply_requests(vm, *doc);
  return doc;
}

/// nullopt after --help.
std::optional<RunRequest> parse_run(const std::vector<std::string>& args, std::ostream& out,
                                    const volatile std::sig_atomic_t* interrupt) {
  const std::optional<po::variables_map> vm = run_command_line().parse(args, out);
  if (!vm) return std::nullopt;
  RunRequest q;
  q.doc = run_document(*vm);
  q.common = common_options(*vm);
  q.dir = out_folder(*vm, "run", "summary.json");
  spdlog::debug("running {}", q.doc->file());
  q.options.limits = run_limits(*vm, interrupt);
  q.options.check = (*vm)["check"].as<bool>();
  q.options.no_requests_csv = (*vm)["no-requests-csv"].as<bool>();
  q.options.threads = static_cast<int>((*vm)["threads"].as<int64_t>());
  q.steps = (*vm)["steps"].as<bool>() || (*vm)["report"].as<bool>();
  q.extras.timeline = (*vm)["timeline"].as<bool>();
  q.extras.timeline_requests = static_cast<uint64_t>((*vm)["timeline-requests"].as<int64_t>());
  q.extras.report = (*vm)["report"].as<bool>();
  q.extras.progress = q.common.progress;
  TokenOutputs t = token_outputs(*vm);
  q.percentiles = std::move(t.percentiles);
  q.exports = std::move(t.exports);
  return q;
}

void print_run(std::ostream& out, const RunRequest& q, const RunOutput& r,
               const std::string& extra_files) {
  out << summary_table(r.summary);
  if (r.summary.stopped_by == "queue limit")
    out << fmt::format(
        "queue      more than {} requests were held at once: the workload arrives "
        "faster than the server serves it (--max-queued sets the limit)\n",
        q.options.limits.max_queued);
  out << r.benchmark_table;
  // A rejected request is a result, not an error (a server turns such requests away too),
  // but one that can never fit is usually a config mistake: say why the first one was.
  if (!r.first_rejection.empty())
    out << fmt::format("\nrejected   {} (each reason is in {}/requests.csv)\n", r.first_rejection,
                       q.dir);
  out << fmt::format("\nwrote {0}/summary.json{1}{2}{3}\n", q.dir,
                     q.options.no_requests_csv ? "" : fmt::format(", {}/requests.csv", q.dir),
                     q.steps ? fmt::format(", {}/steps.csv", q.dir) : "", extra_files);
}

/// `servesim run` in one process, or in one rank of an MPI launch (`world`: the ranks share
/// the replicas out, docs/cluster.md#parallel; rank 0 alone writes and prints).
int run_in(const std::vector<std::string>& args, std::ostream& out,
           const volatile std::sig_atomic_t* interrupt, const MpiWorld* world) {
  std::optional<RunRequest> q = parse_run(args, out, interrupt);
  if (!q) return 0;
  RunOptions& options = q->options;
  options.percentiles = q->percentiles;  // summary.json's ITL too
  if (world) {
    options.ranks = world;
    q->extras.progress = false;  // a progress line would follow the run's order: none
    if (!options.no_requests_csv || q->steps || q->extras.timeline || q->extras.report ||
        !q->percentiles.empty() || !q->exports.empty())
      options.ranks_unsupported =
          "an output is written in the run's order (requests.csv, --steps, --timeline, --report, "
          "--percentiles, --export): run with --no-requests-csv and none of those";
    if (world->rank() != 0) {  // the same run, its share of it; rank 0 writes everything
      spdlog::set_level(spdlog::level::off);
      (void)run_scenario(build_scenario(q->doc), options);
      return 0;
    }
  }
  // requests.csv streams to a temporary file as requests finish; both files take their names
  // only once the run is complete (or stopped and marked partial).
  Scenario scenario = build_scenario(q->doc);  // a bad config stops here, before any output
  for (const std::string& note : q->doc->notes()) std::cerr << "servesim: note: " << note << "\n";
  // A run that cannot fit in memory is refused here; one that might (an overload) is warned of.
  const MemoryNeed need = estimate_memory(scenario, options, {});
  spdlog::debug("memory estimate: floor {} bytes, peak {} bytes ({} requests, {} held at most)",
                need.floor_bytes, need.peak_bytes, need.requests, need.held);
  const std::string memory = check_memory(need, memory_limits(), {});
  if (!memory.empty()) std::cerr << "servesim: warning: " << memory << "\n";
  ResultFiles files(q->dir);
  if (!options.no_requests_csv) options.requests_csv = &files.open("requests.csv");
  if (q->steps) options.steps_csv = &files.open("steps.csv");
  RunExtras extras(q->extras, files, options, scenario.components.source->size_hint(), std::cerr);
  std::optional<TokenTimes> tokens;  // --percentiles, --export: per-token times (ITL)
  if (!q->percentiles.empty() || !q->exports.empty()) {
    options.step_observers.push_back(&tokens.emplace());
    options.request_recorders.push_back(&*tokens);
  }
  RunOutput r = run_scenario(std::move(scenario), options);
  if (!r.engine_notice.empty()) std::cerr << "servesim: note: " << r.engine_notice << "\n";
  extras.before_commit();
  files.open("summary.json") << r.summary_json;
  std::string export_files;
  if (!r.autoscale_csv.empty()) {
    files.open("autoscale.csv") << r.autoscale_csv;
    export_files += fmt::format(", {}/autoscale.csv", q->dir);
  } else {
    files.drop("autoscale.csv");
  }
  for (const ExportFormat* f : q->exports) {
    write_export(*f, files.open(f->file), r.summary, *tokens, q->percentiles);
    export_files += fmt::format(", {}/{}", q->dir, f->file);
  }
  // A file an earlier run left in the folder that this run does not write would not match this
  // summary: the commit removes it before summary.json, the set's marker, takes its name.
  if (options.no_requests_csv) files.drop("requests.csv");
  if (!q->steps) files.drop("steps.csv");
  for (const ExportFormat& f : export_formats())
    if (std::find(q->exports.begin(), q->exports.end(), &f) == q->exports.end()) files.drop(f.file);
  files.commit();
  std::string extra_files;
  try {
    extra_files = extras.after_commit(q->dir);
  } catch (...) {
    files.retract();  // no summary.json without the report.html it was asked for
    throw;
  }
  if (q->common.json) {
    // The files written, as the "wrote" line names them (extras: ", DIR/a, DIR/b").
    nlohmann::ordered_json written = nlohmann::ordered_json::array();
    written.push_back(q->dir + "/summary.json");
    if (!options.no_requests_csv) written.push_back(q->dir + "/requests.csv");
    if (q->steps) written.push_back(q->dir + "/steps.csv");
    std::istringstream more(extra_files + export_files);
    for (std::string f; std::getline(more, f, ',');)
      if (f.size() > 1) written.push_back(f.substr(1));
    nlohmann::ordered_json j{{"command", "run"},
                             {"out", q->dir},
                             {"files", written},
                             {"summary", nlohmann::ordered_json::parse(r.summary_json)}};
    if (tokens && !q->percentiles.empty())
      j["latency_s"] = latency_json(latency_report(*tokens, q->percentiles));
    print_json(out, q->common, j);
  } else if (q->common.tables()) {
    print_run(out, *q, r, extra_files + export_files);
    if (tokens && !q->percentiles.empty())
      out << "\n" << latency_table(latency_report(*tokens, q->percentiles));
  }
  return 0;
}

int cmd_run(const std::vector<std::string>& args, std::ostream& out,
            const volatile std::sig_atomic_t* interrupt) {
  if (MpiWorld::launched_ranks() > 1 && !MpiWorld::compiled_in())
    throw InputError(fmt::format(
        "started as one of {} MPI ranks (mpirun), but this servesim was built without MPI (CMake "
        "-DSERVESIM_MPI=ON with an MPI such as OpenMPI installed; docs/cluster.md#parallel): run "
        "it as one process, with --threads N",
        MpiWorld::launched_ranks()));
  MpiWorld world;
  if (world.size() == 1) return run_in(args, out, interrupt, nullptr);
  try {
    return run_in(args, out, interrupt, &world);
  } catch (const std::exception& e) {  // the other ranks wait for this one: end them all
    std::cerr << fmt::format("servesim: error (rank {} of {}): {}\n", world.rank(), world.size(),
                             e.what());
    world.abort(dynamic_cast<const InputError*>(&e) != nullptr ? 2 : 1);
  }
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
