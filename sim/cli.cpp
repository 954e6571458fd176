#include "sim/cli.h"

#include <filesystem>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "models/catalog.h"
#include "models/step_time_model.h"
#include "report/report.h"
#include "schedulers/router.h"
#include "schedulers/scheduler.h"
#include "sim/calibrate_cmd.h"
#include "sim/capacity_cmd.h"
#include "sim/explain_cmd.h"
#include "sim/output.h"
#include "sim/run_extras.h"
#include "sim/scenario.h"
#include "sim/size_cmd.h"
#include "sim/trace_cmd.h"
#include "traces/arrival_process.h"
#include "traces/length_dist.h"
#include "traces/workload_source.h"

namespace po = boost::program_options;

namespace servesim {
namespace {

constexpr const char* k_usage = R"(servesim: a discrete-event simulator of LLM serving

usage:
  servesim run [CONFIG.yaml] [--out DIR] [--set key.path=value ...] [--seed N] [--quiet] [--check]
               [--max-sim-time S] [--max-wall-time S] [--no-requests-csv] [--steps]
               [--timeline] [--timeline-requests N] [--report] [--no-progress]
  servesim report RESULT_DIR... [--out report.html]
  servesim list [schedulers|routers|step-time-models|workload-sources|arrival-kinds|
                 length-kinds|kv-policies|models|hardware]
  servesim explain --model M --hardware H [--weight-dtype D] [--kv-dtype D] [--context N]
                   [--tp N] [--utilization U] [--measured-mb MB --measured-ms MS]
  servesim calibrate MEASUREMENTS [--format F] [--form auto|hinge|linear|table] [--out FILE.yaml]
  servesim trace stats FILE [--format F] [--sort] [--window-s W] [--json OUT.json]
                       [--skip-zero-tokens] [--hash-block-tokens N] [--model M]
  servesim trace gen CONFIG.yaml --out FILE.csv [--set key.path=value ...] [--seed N] [--requests N]
  servesim capacity CONFIG.yaml [--out DIR] [--tolerance T] [--min-attainment A] [--set ...] [--quiet]
  servesim size SWEEP.yaml [--out DIR] [--jobs N] [--set ...] [--dry-run] [--quiet]
  servesim --help | --version

`servesim run` with no CONFIG runs the embedded default scenario (configs/default.yaml).
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
  if (args.size() > 1) throw UsageError("list takes at most one argument");
  std::vector<std::string> names;
  for (const auto& g : groups) names.push_back(g.first);
  if (!args.empty() && std::find(names.begin(), names.end(), args[0]) == names.end())
    throw UsageError(fmt::format("list: unknown \"{}\"{} (valid: {})", args[0],
                                 did_you_mean(args[0], names), join_names(names)));
  for (const auto& [group, members] : groups) {
    if (!args.empty() && args[0] != group) continue;
    if (args.empty()) out << group << ":";
    for (const auto& m : members) out << (args.empty() ? " " : "") << m << (args.empty() ? "" : "\n");
    if (args.empty()) out << "\n";
  }
  return 0;
}

int cmd_run(const std::vector<std::string>& args, std::ostream& out,
            const volatile std::sig_atomic_t* interrupt) {
  po::options_description opts("run options");
  opts.add_options()
      ("config", po::value<std::string>(), "scenario YAML (default: the embedded default)")
      ("out", po::value<std::string>()->default_value("servesim-out"), "directory for result files")
      ("set", po::value<std::vector<std::string>>()->composing(), "override key.path=value")
      ("seed", po::value<std::string>(), "override the config's seed")
      ("quiet,q", po::bool_switch(), "print nothing on success")
      ("check", po::bool_switch(), "verify the engine's invariants at every step")
      ("no-requests-csv", po::bool_switch(), "write summary.json only (sweeps, very long runs)")
      ("steps", po::bool_switch(), "also write steps.csv: one row per step (shape, KV, queue, bound)")
      ("max-sim-time", po::value<double>(), "stop at this simulated time (seconds); results are partial")
      ("max-wall-time", po::value<double>(), "stop after this many wall-clock seconds; results are partial")
      ("timeline", po::bool_switch(), "also write timeline.json (Chrome trace: Perfetto, chrome://tracing)")
      ("timeline-requests", po::value<uint64_t>()->default_value(1000),
       "requests with id below N get a track in timeline.json")
      ("report", po::bool_switch(), "also write steps.csv and report.html (servesim report)")
      ("no-progress", po::bool_switch(), "no progress on stderr");
  po::positional_options_description pos;
  pos.add("config", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(fmt::format("run: {}", e.what()));
  }

  std::shared_ptr<Document> doc =
      vm.count("config") ? Document::load_file(vm["config"].as<std::string>())
                         : std::make_shared<Document>(k_default_scenario_yaml, "<default scenario>");
  if (vm.count("set"))
    for (const auto& a : vm["set"].as<std::vector<std::string>>()) doc->apply_override(a);
  if (vm.count("seed")) doc->apply_override("seed=" + vm["seed"].as<std::string>());

  const std::string dir = vm["out"].as<std::string>();
  spdlog::debug("running {}", doc->file());
  RunLimits limits;
  limits.interrupt = interrupt;
  if (vm.count("max-sim-time")) {
    const double v = vm["max-sim-time"].as<double>();
    if (!(v > 0) || v > 9.0e9) throw InputError(fmt::format("--max-sim-time {}: must be > 0 seconds", v));
    limits.max_sim_time = Time::from_seconds(v);
  }
  if (vm.count("max-wall-time")) {
    limits.max_wall_s = vm["max-wall-time"].as<double>();
    if (!(limits.max_wall_s > 0))
      throw InputError(fmt::format("--max-wall-time {}: must be > 0 seconds", limits.max_wall_s));
  }
  RunOptions options;
  options.check = vm["check"].as<bool>();
  options.limits = limits;
  options.no_requests_csv = vm["no-requests-csv"].as<bool>();
  // requests.csv streams to a temporary file as requests finish; both files take their names
  // only once the run is complete (or stopped and marked partial).
  Scenario scenario = build_scenario(doc);  // a bad config stops here, before any output
  ResultFiles files(dir);
  if (!options.no_requests_csv) options.requests_csv = &files.open("requests.csv");
  const bool steps = vm["steps"].as<bool>() || vm["report"].as<bool>();
  RunExtrasOptions extra_options;
  extra_options.timeline = vm["timeline"].as<bool>();
  extra_options.timeline_requests = vm["timeline-requests"].as<uint64_t>();
  extra_options.report = vm["report"].as<bool>();
  extra_options.progress = !vm["quiet"].as<bool>() && !vm["no-progress"].as<bool>();
  if (steps) options.steps_csv = &files.open("steps.csv");
  RunExtras extras(extra_options, files, options, scenario.components.source->size_hint(),
                   std::cerr);
  RunOutput r = run_scenario(std::move(scenario), options);
  extras.before_commit();
  files.open("summary.json") << r.summary_json;
  files.commit();
  const std::string extra_files = extras.after_commit(dir);
  // A requests.csv left by an earlier run in the same directory would not match this summary.
  if (options.no_requests_csv) std::filesystem::remove(std::filesystem::path(dir) / "requests.csv");
  if (!steps) std::filesystem::remove(std::filesystem::path(dir) / "steps.csv");
  if (!vm["quiet"].as<bool>()) {
    out << summary_table(r.summary);
    // A rejected request is a result, not an error (a server turns such requests away too),
    // but one that can never fit is usually a config mistake: say why the first one was.
    if (!r.first_rejection.empty())
      out << fmt::format("\nrejected   {} (each reason is in {}/requests.csv)\n", r.first_rejection,
                         dir);
    out << fmt::format("\nwrote {0}/summary.json{1}{2}{3}\n", dir,
                       options.no_requests_csv ? "" : fmt::format(", {}/requests.csv", dir),
                       steps ? fmt::format(", {}/steps.csv", dir) : "", extra_files);
  }
  return 0;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const volatile std::sig_atomic_t* interrupt) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      (args.empty() ? err : out) << k_usage;
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
      out << "servesim " << SERVESIM_VERSION << "\n";
      return 0;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "run") return cmd_run(rest, out, interrupt);
    if (args[0] == "list") return cmd_list(rest, out);
    if (args[0] == "calibrate") return cmd_calibrate(rest, out);
    if (args[0] == "explain") return cmd_explain(rest, out);
    if (args[0] == "trace") return cmd_trace(rest, out);
    if (args[0] == "report") return cmd_report(rest, out);
    if (args[0] == "capacity") return cmd_capacity(rest, out);
    if (args[0] == "size") return cmd_size(rest, out);
    const std::vector<std::string> commands{"calibrate", "capacity", "explain", "list", "report", "run",
                                          "size", "trace"};
    throw UsageError(fmt::format("unknown command \"{}\"{} (valid: {})", args[0],
                                 did_you_mean(args[0], commands), join_names(commands)));
  } catch (const UsageError& e) {
    err << "servesim: " << e.what() << "\n\n" << k_usage;
    return 2;
  } catch (const InputError& e) {
    err << "servesim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "servesim: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace servesim
