#include "cli/size_cmd.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <thread>

#include "cli/cli_options.h"
#include "cli/progress.h"
#include "cli/sim_options.h"
#include "core/errors.h"
#include "metrics/output.h"
#include "metrics/result_files.h"
#include "sizing/sweep.h"
#include "sizing/sweep_output.h"
#include "sizing/sweep_pool.h"
#include "sizing/sweep_run.h"

namespace po = boost::program_options;

namespace servesim {
namespace {

struct SizeOptions {
  std::string sweep;
  std::string out;
  std::vector<std::string> sets;
  unsigned jobs = 1;
  CommonOptions common;
  RunLimits limits;  ///< of every run; the interrupt is set by cmd_size
  bool dry_run = false;
  TokenOutputs tokens;  ///< --percentiles (columns per point), --export (the cheapest points')
};

}  // namespace

CommandLine size_command_line() {
  CommandLine cl("size", "SWEEP.yaml [options]",
                 "Runs every point of a sizing sweep and marks the cheapest that meet the SLOs.");
  cl.positional("sweep", 1, "SWEEP.yaml", "sweep file");
  cl.out_option("servesim-size",
                "points.csv, summary.json and the exports of each scenario's cheapest point");
  add_simulation_options(cl);
  cl.int_option("jobs,j", 1, 4096, "threads (default: all cores)");
  // clang-format off
  cl.options()
      ("dry-run", po::bool_switch(), "check the sweep file and list its points; run nothing");
  // clang-format on
  cl.require("sweep", "give a sweep file (docs/sizing.md)");
  return cl;
}

namespace {

/// nullopt after --help.
std::optional<SizeOptions> parse_size_args(const std::vector<std::string>& args,
                                           std::ostream& out) {
  const std::optional<po::variables_map> parsed = size_command_line().parse(args, out);
  if (!parsed) return std::nullopt;
  const po::variables_map& vm = *parsed;
  SizeOptions o;
  o.common = common_options(vm);
  o.sweep = vm["sweep"].as<std::string>();
  o.out = out_folder(vm, "size", "points.csv");
  o.sets = overrides(vm);
  if (auto r = requests_override(vm)) o.sets.push_back(*r);
  o.jobs = std::max(1u, std::thread::hardware_concurrency());
  if (vm.count("jobs")) o.jobs = static_cast<unsigned>(vm["jobs"].as<int64_t>());
  o.dry_run = vm["dry-run"].as<bool>();
  o.limits = run_limits(vm, nullptr);
  o.tokens = token_outputs(vm);
  return o;
}

// This rank's rows, gathered on rank 0 into point order; empty on other ranks.
std::vector<PointResult> run_all(const SweepSpec& spec, const SizeOptions& o, const MpiRanks& mpi,
                                 const RunLimits& limits) {
  std::vector<size_t> mine;
  for (size_t i = static_cast<size_t>(mpi.rank()); i < spec.point_count();
       i += static_cast<size_t>(mpi.size()))
    mine.push_back(i);
  spdlog::debug("size: rank {} of {} runs {} of {} points on {} threads", mpi.rank(), mpi.size(),
                mine.size(), spec.point_count(), o.jobs);
  Progress progress(mpi.size() > 1 ? fmt::format("size (rank 0 of {})", mpi.size()) : "size",
                    static_cast<double>(mine.size()), "points", std::cerr,
                    o.common.progress && mpi.rank() == 0);
  std::vector<PointResult> rows = evaluate_points(
      spec, mine, o.jobs, [&](size_t n) { progress.update(static_cast<double>(n)); }, limits);
  progress.finish();
  if (mpi.size() == 1) return rows;
  std::vector<std::string> sent;
  sent.reserve(rows.size());
  for (const auto& r : rows) sent.push_back(point_to_json(r).dump());
  const std::vector<std::string> got = mpi.gather(sent);
  if (mpi.rank() != 0) return {};
  std::vector<PointResult> all(spec.point_count());
  for (const auto& s : got) {
    PointResult r = point_from_json(nlohmann::json::parse(s));
    const size_t i = r.point;
    all.at(i) = std::move(r);
  }
  return all;
}

/// "point-7.vllm-bench.json": the export `f` of point `i`.
std::string point_export_name(size_t i, const ExportFormat& f) {
  return fmt::format("point-{}.{}", i, f.file);
}

/// Whether `name` is an export of some point ("point-DIGITS.FILE").
bool is_point_export(const std::string& name) {
  if (name.rfind("point-", 0) != 0) return false;
  size_t k = 6;
  while (k < name.size() && std::isdigit(static_cast<unsigned char>(name[k]))) ++k;
  if (k == 6 || k >= name.size() || name[k] != '.') return false;
  for (const ExportFormat& f : export_formats())
    if (name.substr(k + 1) == f.file) return true;
  return false;
}

/// --export: runs each scenario's cheapest point again, keeping its token times, and opens its
/// exports in `files`. Returns the names written. Only these points: a sweep has up to a million
/// points, and an export (vllm-bench.json lists every request) of each would be gigabytes that
/// nobody reads; the cheapest point is the deployment sizing recommends, the one to hand to
/// another tool. The rerun is the row's run again (same config and seed: the same result).
std::vector<std::string> write_point_exports(const SweepSpec& spec,
                                             const std::vector<PointResult>& rows,
                                             const SizeOptions& o, const RunLimits& limits,
                                             ResultFiles& files) {
  std::vector<std::string> names;
  if (o.tokens.exports.empty()) return names;
  for (const PointResult& r : rows) {
    if (!r.cheapest) continue;
    TokenTimes tokens;
    const Probe p = rerun_row(spec, r, tokens, limits);
    if (!p.built || !p.error.empty())
      throw InputError(fmt::format("point {} ({}): {}", r.point, spec.label(r.point), p.error));
    for (const ExportFormat* f : o.tokens.exports) {
      names.push_back(point_export_name(r.point, *f));
      write_export(*f, files.open(names.back()), p.summary, tokens, o.tokens.percentiles);
    }
  }
  return names;
}

/// Removes the point exports in `dir` that this command did not write (an earlier sweep's).
void remove_stale_exports(const std::string& dir, const std::vector<std::string>& written) {
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (is_point_export(name) && std::find(written.begin(), written.end(), name) == written.end())
      stale.push_back(e.path());
  }
  for (const auto& path : stale) std::filesystem::remove(path, ec);
}

}  // namespace

int cmd_size(const std::vector<std::string>& args, std::ostream& out,
             const volatile std::sig_atomic_t* interrupt) {
  const std::optional<SizeOptions> parsed = parse_size_args(args, out);
  if (!parsed) return 0;
  const SizeOptions& o = *parsed;
  const MpiRanks mpi;
  SweepSpec spec = load_sweep(o.sweep, o.sets);
  spec.percentiles = o.tokens.percentiles;
  if (o.dry_run) {
    if (mpi.rank() != 0) return 0;
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    for (size_t i = 0; i < spec.point_count(); ++i)
      points.push_back({{"point", i}, {"label", spec.label(i)}});
    const char* mode = spec.mode == SweepMode::Fixed ? "fixed" : "min_replicas";
    // Each axis's role (docs/sizing.md#axis-roles), so that an inferred one can be checked.
    nlohmann::ordered_json axes = nlohmann::ordered_json::array();
    std::string roles;
    for (const SweepAxis& a : spec.axes) {
      axes.push_back({{"key", a.key}, {"role", role_name(a.role)}});
      roles += fmt::format("{}{} ({})", roles.empty() ? "" : ", ", a.key, role_name(a.role));
    }
    if (o.common.json) {
      print_json(out, o.common,
                 {{"command", "size"},
                  {"dry_run", true},
                  {"files", nlohmann::ordered_json::array()},
                  {"mode", mode},
                  {"base", spec.base_file},
                  {"axes", axes},
                  {"points", points}});
    } else if (o.common.tables()) {
      out << fmt::format("{} points ({} mode), base {}\n", spec.point_count(), mode,
                         spec.base_file);
      if (!roles.empty())
        out << fmt::format("axes: {}; {} scenario point{}\n", roles, spec.scenario_count(),
                           spec.scenario_count() == 1 ? "" : "s");
      for (size_t i = 0; i < spec.point_count(); ++i)
        out << fmt::format("{:>5}  {}\n", i, spec.label(i));
    }
    return 0;
  }
  // Rank 0 takes the folder (its lock) before the points run, so a busy folder stops the sweep
  // before it starts.
  std::optional<ResultFiles> files;
  if (mpi.rank() == 0) files.emplace(o.out);
  RunLimits limits = o.limits;
  limits.interrupt = interrupt;
  std::vector<PointResult> rows = run_all(spec, o, mpi, limits);
  if (mpi.rank() != 0) return 0;
  mark_pareto(rows, spec);
  const std::string summary = sweep_summary_json(spec, rows);
  files->open("points.csv") << points_csv(spec, rows);
  files->open("summary.json") << summary;
  const std::vector<std::string> exports = write_point_exports(spec, rows, o, limits, *files);
  files->commit();
  remove_stale_exports(o.out, exports);
  nlohmann::ordered_json written = {o.out + "/points.csv", o.out + "/summary.json"};
  std::string export_files;  // ", DIR/a, DIR/b" as the "wrote" line names them
  for (const std::string& name : exports) {
    written.push_back(o.out + "/" + name);
    export_files += fmt::format(", {}/{}", o.out, name);
  }
  if (o.common.json)
    print_json(out, o.common,
               {{"command", "size"},
                {"out", o.out},
                {"files", written},
                {"summary", nlohmann::ordered_json::parse(summary)}});
  else if (o.common.tables())
    out << sweep_report(spec, rows)
        << fmt::format("\nwrote {0}/points.csv, {0}/summary.json{1}\n", o.out, export_files);
  return 0;
}

}  // namespace servesim
