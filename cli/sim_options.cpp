#include "cli/sim_options.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "metrics/request_count.h"

namespace servesim {

namespace {

/// "vidur (request_metrics.csv: Vidur's per-request metrics), ..." from the export registry.
std::string export_help() {
  std::string formats;
  for (const ExportFormat& f : export_formats())
    formats += fmt::format("{}{} ({}: {})", formats.empty() ? "" : ", ", f.name, f.file, f.what);
  return "also write another tool's result layout into --out, repeatable (run and capacity: of "
         "the run (at the capacity); size: of each scenario's cheapest point, as "
         "point-N.FILE): " +
         formats;
}

}  // namespace

void add_scenario_options(CommandLine& cl) {
  cl.set_option().seed_option();
  cl.int_option("requests", 1, int64_t{1} << 40,
                "override workload.synthetic.requests (a synthetic workload's request count)");
}

void add_simulation_options(CommandLine& cl) {
  add_scenario_options(cl);
  cl.real_option("max-sim-time", 0, 9e9, "seconds",
                 "stop each run at this simulated time; its results are partial", std::nullopt,
                 true);
  cl.real_option("max-wall-time", 0, 1e9, "seconds",
                 "stop each run after this many wall-clock seconds; its results are partial",
                 std::nullopt, true);
  cl.int_option("max-queued", 1, 1'000'000'000,
                "stop a run once more requests than this are held at once (queued or running); "
                "its results are partial",
                RunLimits::k_default_max_queued);
  static const std::string exports = export_help();
  // clang-format off
  cl.options()
      ("percentiles", boost::program_options::value<std::string>(),
       "latency percentiles of TTFT, TPOT, ITL and E2E to report (as 50,90,99,99.9), with mean, "
       "median and std where printed; also summary.json's ITL and the exports' percentiles "
       "(default 99). run and capacity: of the run (at the capacity); size: columns per point")
      ("export", boost::program_options::value<std::vector<std::string>>()->composing(),
       exports.c_str());
  // clang-format on
}

const std::vector<std::string>& scenario_option_names() {
  static const std::vector<std::string> names{"set", "seed", "requests"};
  return names;
}

const std::vector<std::string>& simulation_option_names() {
  static const std::vector<std::string> names{"set",          "seed",          "requests",
                                              "max-sim-time", "max-wall-time", "max-queued",
                                              "percentiles",  "export"};
  return names;
}

std::optional<std::string> requests_override(const boost::program_options::variables_map& vm) {
  if (!vm.count("requests")) return std::nullopt;
  return "workload.synthetic.requests=" + std::to_string(vm["requests"].as<int64_t>());
}

void apply_requests(const boost::program_options::variables_map& vm, Document& doc) {
  if (vm.count("requests")) apply_request_count(doc, vm["requests"].as<int64_t>(), "--requests");
}

RunLimits run_limits(const boost::program_options::variables_map& vm,
                     const volatile std::sig_atomic_t* interrupt) {
  RunLimits limits;
  limits.interrupt = interrupt;
  // CommandLine::real_option and int_option checked the ranges.
  if (vm.count("max-sim-time"))
    limits.max_sim_time = Time::from_seconds(vm["max-sim-time"].as<double>());
  if (vm.count("max-wall-time")) limits.max_wall_s = vm["max-wall-time"].as<double>();
  if (vm.count("max-queued")) limits.max_queued = vm["max-queued"].as<int64_t>();
  return limits;
}

TokenOutputs token_outputs(const boost::program_options::variables_map& vm) {
  TokenOutputs t;
  if (vm.count("percentiles"))
    t.percentiles = parse_percentiles(vm["percentiles"].as<std::string>(), "--percentiles");
  if (vm.count("export"))
    t.exports = export_list(vm["export"].as<std::vector<std::string>>(), "--export");
  return t;
}

}  // namespace servesim
