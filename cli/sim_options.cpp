#include "cli/sim_options.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace servesim {

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
}

const std::vector<std::string>& scenario_option_names() {
  static const std::vector<std::string> names{"set", "seed", "requests"};
  return names;
}

const std::vector<std::string>& simulation_option_names() {
  static const std::vector<std::string> names{"set",          "seed",          "requests",
                                              "max-sim-time", "max-wall-time", "max-queued"};
  return names;
}

std::optional<std::string> requests_override(const boost::program_options::variables_map& vm) {
  if (!vm.count("requests")) return std::nullopt;
  return "workload.synthetic.requests=" + std::to_string(vm["requests"].as<int64_t>());
}

void apply_requests(const boost::program_options::variables_map& vm, Document& doc) {
  const std::optional<std::string> o = requests_override(vm);
  if (!o) return;
  // A missing key gives an invalid node, which only IsDefined() may be asked about.
  auto is_map = [](const YAML::Node& n) { return n.IsDefined() && n.IsMap(); };
  const YAML::Node root = doc.root();
  if (!is_map(root) || !is_map(root["workload"]) || !is_map(root["workload"]["synthetic"]))
    throw InputError(
        fmt::format("--requests: {} has no workload.synthetic to override", doc.file()));
  doc.apply_override(*o);
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

}  // namespace servesim
