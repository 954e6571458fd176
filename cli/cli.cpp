#include "cli/cli.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/calibrate_cmd.h"
#include "cli/capacity_cmd.h"
#include "cli/cli_options.h"
#include "cli/explain_cmd.h"
#include "cli/report_cmd.h"
#include "cli/run_extras.h"
#include "cli/size_cmd.h"
#include "cli/trace_cmd.h"
#include "core/interrupt.h"
#include "core/registry.h"
#include "metrics/exports.h"
#include "metrics/output.h"
#include "metrics/run_scenario.h"
#include "models/catalog.h"
#include "models/step_time_model.h"
#include "report/report.h"
#include "schedulers/router.h"
#include "schedulers/scheduler.h"
#include "traces/arrival_process.h"
#include "traces/length_dist.h"
#include "traces/workload_source.h"

namespace po = boost::program_options;

namespace servesim {
namespace {

constexpr const char* k_usage_head =
    "servesim: a discrete-event simulator of LLM serving\n\nusage:\n";
constexpr const char* k_usage_tail = R"(  servesim --help | --version

`servesim COMMAND --help` lists a command's options. `servesim run` with no CONFIG runs the
embedded default scenario (configs/default.yaml).
See docs/config.md for every key and docs/metrics.md for every metric.
)";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int cmd_list(const std::vector<std::string>& args, std::ostream& out) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> groups{
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
  std::vector<std::string> names;
  for (const auto& g : groups) names.push_back(g.first);
  CommandLine cl("list", "[GROUP]");
  cl.options()("group", po::value<std::vector<std::string>>(),
               fmt::format("what to list: {}", join_names(names)).c_str());
  const auto vm = cl.positional("group", -1).parse(args, out);
  if (!vm) return 0;
  const auto given = vm->count("group") ? (*vm)["group"].as<std::vector<std::string>>()
                                        : std::vector<std::string>{};
  if (given.size() > 1) throw UsageError("list takes at most one argument");
  if (!given.empty() && std::find(names.begin(), names.end(), given[0]) == names.end())
    throw UsageError(fmt::format("list: unknown {}{} (valid: {})", quote_input(given[0]),
                                 did_you_mean(given[0], names), join_names(names)));
  for (const auto& [group, members] : groups) {
    if (!given.empty() && given[0] != group) continue;
    if (given.empty()) out << group << ":";
    for (const auto& m : members)
      out << (given.empty() ? " " : "") << m << (given.empty() ? "" : "\n");
    if (given.empty()) out << "\n";
  }
  return 0;
}

/// What `servesim run` was asked to do, read from its command line and checked.
struct RunRequest {
  std::shared_ptr<Document> doc;  ///< the config with every --set and --seed applied
  std::string dir;                ///< --out
  bool quiet = false;
  bool steps = false;  ///< steps.csv: --steps or --report
  RunOptions options;  ///< check, limits and no_requests_csv; the streams are opened later
  RunExtrasOptions extras;
  std::vector<double> percentiles;           ///< --percentiles; empty: not given
  std::vector<const ExportFormat*> exports;  ///< --export, each once
};

CommandLine run_command_line() {
  CommandLine cl("run", "[CONFIG.yaml] [options]");
  // clang-format off
  cl.options()
      ("config", po::value<std::string>(), "scenario YAML (default: the embedded default)")
      ("out", po::value<std::string>()->default_value("servesim-out"), "directory for result files");
  cl.set_option().seed_option().quiet_option();
  cl.options()
      ("check", po::bool_switch(), "verify the engine's invariants at every step")
      ("no-requests-csv", po::bool_switch(), "write summary.json only (sweeps, very long runs)")
      ("steps", po::bool_switch(), "also write steps.csv: one row per step (shape, KV, queue, bound)")
      ("timeline", po::bool_switch(), "also write timeline.json (Chrome trace: Perfetto, chrome://tracing)")
      ("report", po::bool_switch(), "also write steps.csv and report.html (servesim report)")
      ("no-progress", po::bool_switch(), "no progress on stderr")
      ("percentiles", po::value<std::string>(), "also print mean, median, std and these percentiles of TTFT, TPOT, ITL and E2E (as 50,90,99,99.9); the export's percentiles (default 99)")
      ("export", po::value<std::vector<std::string>>()->composing(), "also write another tool's result layout: vllm-bench (vllm-bench.json: vllm bench serve's result JSON), vidur (request_metrics.csv: Vidur's per-request metrics)");
  // clang-format on
  cl.real_option("max-sim-time", 0, 9e9, "seconds",
                 "stop at this simulated time; results are partial", std::nullopt, true);
  cl.real_option("max-wall-time", 0, 1e9, "seconds",
                 "stop after this many wall-clock seconds; results are partial", std::nullopt,
                 true);
  cl.int_option("max-queued", 1, 1'000'000'000,
                "stop once more requests than this are held at once (queued or running); results "
                "are partial",
                RunLimits::k_default_max_queued);
  cl.int_option("timeline-requests", 0, 1'000'000'000,
                "requests with id below N get a track in timeline.json", 1000);
  cl.positional("config");
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
  return doc;
}

RunLimits run_limits(const po::variables_map& vm, const volatile std::sig_atomic_t* interrupt) {
  RunLimits limits;
  limits.interrupt = interrupt;
  // CommandLine::real_option checked both ranges.
  if (vm.count("max-sim-time"))
    limits.max_sim_time = Time::from_seconds(vm["max-sim-time"].as<double>());
  if (vm.count("max-wall-time")) limits.max_wall_s = vm["max-wall-time"].as<double>();
  limits.max_queued = vm["max-queued"].as<int64_t>();
  return limits;
}

/// nullopt after --help.
std::optional<RunRequest> parse_run(const std::vector<std::string>& args, std::ostream& out,
                                    const volatile std::sig_atomic_t* interrupt) {
  const std::optional<po::variables_map> vm = run_command_line().parse(args, out);
  if (!vm) return std::nullopt;
  RunRequest q;
  q.doc = run_document(*vm);
  q.dir = (*vm)["out"].as<std::string>();
  spdlog::debug("running {}", q.doc->file());
  q.options.limits = run_limits(*vm, interrupt);
  q.options.check = (*vm)["check"].as<bool>();
  q.options.no_requests_csv = (*vm)["no-requests-csv"].as<bool>();
  q.quiet = (*vm)["quiet"].as<bool>();
  q.steps = (*vm)["steps"].as<bool>() || (*vm)["report"].as<bool>();
  q.extras.timeline = (*vm)["timeline"].as<bool>();
  q.extras.timeline_requests = static_cast<uint64_t>((*vm)["timeline-requests"].as<int64_t>());
  q.extras.report = (*vm)["report"].as<bool>();
  q.extras.progress = !q.quiet && !(*vm)["no-progress"].as<bool>();
  if (vm->count("percentiles"))
    q.percentiles = parse_percentiles((*vm)["percentiles"].as<std::string>(), "--percentiles");
  if (vm->count("export"))
    for (const std::string& e : (*vm)["export"].as<std::vector<std::string>>()) {
      const ExportFormat* f = &export_format(e, "--export");
      if (std::find(q.exports.begin(), q.exports.end(), f) == q.exports.end())
        q.exports.push_back(f);
    }
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

int cmd_run(const std::vector<std::string>& args, std::ostream& out,
            const volatile std::sig_atomic_t* interrupt) {
  std::optional<RunRequest> q = parse_run(args, out, interrupt);
  if (!q) return 0;
  RunOptions& options = q->options;
  // requests.csv streams to a temporary file as requests finish; both files take their names
  // only once the run is complete (or stopped and marked partial).
  Scenario scenario = build_scenario(q->doc);  // a bad config stops here, before any output
  for (const std::string& note : q->doc->notes()) std::cerr << "servesim: note: " << note << "\n";
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
  extras.before_commit();
  files.open("summary.json") << r.summary_json;
  std::string export_files;
  for (const ExportFormat* f : q->exports) {
    write_export(*f, files.open(f->file), r.summary, *tokens, q->percentiles);
    export_files += fmt::format(", {}/{}", q->dir, f->file);
  }
  files.commit();
  const std::string extra_files = extras.after_commit(q->dir);
  // A requests.csv left by an earlier run in the same directory would not match this summary.
  const std::filesystem::path dir(q->dir);
  if (options.no_requests_csv) std::filesystem::remove(dir / "requests.csv");
  if (!q->steps) std::filesystem::remove(dir / "steps.csv");
  for (const ExportFormat& f : export_formats())
    if (std::find(q->exports.begin(), q->exports.end(), &f) == q->exports.end())
      std::filesystem::remove(dir / f.file);
  if (!q->quiet) {
    print_run(out, *q, r, extra_files + export_files);
    if (tokens && !q->percentiles.empty())
      out << "\n" << latency_table(latency_report(*tokens, q->percentiles));
  }
  return 0;
}

/// One subcommand: its name, its lines of the usage text and what runs it. The table drives
/// dispatch, the usage text (in this order) and the "did you mean" of an unknown command; a new
/// command is one file (cli/NAME_cmd.cpp) and one row here.
struct Command {
  const char* name;
  const char* usage;
  int (*run)(const std::vector<std::string>& args, std::ostream& out,
             const volatile std::sig_atomic_t* interrupt);
};

// clang-format off
constexpr std::array k_commands{
    Command{"run", R"(  servesim run [CONFIG.yaml] [--out DIR] [--set key.path=value ...] [--seed N] [--quiet] [--check]
               [--max-sim-time S] [--max-wall-time S] [--max-queued N] [--no-requests-csv] [--steps]
               [--timeline] [--timeline-requests N] [--report] [--no-progress]
)", &cmd_run},
    Command{"report", R"(  servesim report RESULT_DIR... [--out report.html]
)", &cmd_report},
    Command{"list", R"(  servesim list [schedulers|routers|step-time-models|workload-sources|arrival-kinds|
                 length-kinds|kv-policies|models|hardware]
)", [](const auto& a, std::ostream& o, const volatile std::sig_atomic_t*) { return cmd_list(a, o); }},
    Command{"explain", R"(  servesim explain --model M --hardware H [--weight-dtype D] [--kv-dtype D] [--context N]
                   [--tp N] [--utilization U] [--measured-mb MB --measured-ms MS]
)", [](const auto& a, std::ostream& o, const volatile std::sig_atomic_t*) { return cmd_explain(a, o); }},
    Command{"calibrate", R"(  servesim calibrate MEASUREMENTS [--format F] [--form auto|hinge|linear|table] [--out FILE.yaml]
)", &cmd_calibrate},
    Command{"trace", R"(  servesim trace stats FILE [--format F] [--sort] [--window-s W] [--json OUT.json]
                       [--skip-zero-tokens] [--hash-block-tokens N] [--model M]
  servesim trace gen CONFIG.yaml --out FILE.csv [--set key.path=value ...] [--seed N] [--requests N]
)", &cmd_trace},
    Command{"capacity", R"(  servesim capacity CONFIG.yaml [--out DIR] [--tolerance T] [--min-attainment A] [--set ...] [--quiet]
)", &cmd_capacity},
    Command{"size", R"(  servesim size SWEEP.yaml [--out DIR] [--jobs N] [--set ...] [--dry-run] [--quiet]
)", &cmd_size},
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

std::string usage() {
  std::string u = k_usage_head;
  for (const Command& c : k_commands) u += c.usage;
  return u + k_usage_tail;
}

}  // namespace

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const Command& c : k_commands) names.emplace_back(c.name);
  std::sort(names.begin(), names.end());
  return names;
}

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
    throw UsageError(fmt::format("unknown command {}{} (valid: {})", quote_input(args[0]),
                                 did_you_mean(args[0], commands), join_names(commands)));
  } catch (const UsageError& e) {
    err << "servesim: " << e.what() << "\n\n" << usage();
    return 2;
  } catch (const InputError& e) {
    err << "servesim: error: " << e.what() << "\n";
    return 2;
  } catch (const Interrupted& e) {
    err << "servesim: " << e.what() << "\n";
    return 128 + e.signal();
  } catch (const std::exception& e) {
    err << "servesim: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace servesim
