#include "cli/run_cmd.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/run_extras.h"
#include "cli/sim_options.h"
#include "core/registry.h"
#include "core/side_thread.h"
#include "metrics/exports.h"
#include "metrics/memory_budget.h"
#include "metrics/output.h"
#include "metrics/run_scenario.h"
#include "sim/parallel_mpi.h"

namespace po = boost::program_options;

namespace servesim {
namespace {

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

}  // namespace

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

namespace {

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
  // A second CPU reads the trace and writes requests.csv beside the engine (one run's wall
  // time; the same results).
  q.options.io_thread = q.options.threads == 0 && usable_cpus() >= 2;
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

}  // namespace

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

}  // namespace servesim
