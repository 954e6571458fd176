#pragma once
// The options of every command that runs simulations (run, capacity, size), defined once so that
// each means the same, reads the same and is checked the same on all of them
// (docs/cli.md#conventions): --set, --seed, --requests, --max-sim-time, --max-wall-time,
// --max-queued, --percentiles and --export.
// tests/cli/cli_options_test.cpp fails when one of these commands lacks one, or when an option
// name means something else on two commands.
#include <boost/program_options.hpp>
#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_options.h"
#include "core/config.h"
#include "metrics/token_outputs.h"
#include "sim/simulation.h"

namespace servesim {

/// Adds the options that change the scenario a command reads: --set, --seed and --requests (the
/// workload's synthetic request count). trace gen takes these, and runs nothing.
void add_scenario_options(CommandLine& cl);
/// Adds add_scenario_options(), the run limits (--max-sim-time, --max-wall-time, --max-queued)
/// and the token-time outputs (--percentiles, --export): run, capacity and size.
void add_simulation_options(CommandLine& cl);

/// The long names add_scenario_options() adds, in that order.
[[nodiscard]] const std::vector<std::string>& scenario_option_names();
/// The long names add_simulation_options() adds, in that order.
[[nodiscard]] const std::vector<std::string>& simulation_option_names();

/// --requests N as an override, "workload.synthetic.requests=N"; nullopt without --requests.
[[nodiscard]] std::optional<std::string> requests_override(
    const boost::program_options::variables_map& vm);
/// Applies --requests to `doc` (after the --set overrides), refusing a scenario whose workload is
/// not synthetic ("--requests: c.yaml has no workload.synthetic to override").
void apply_requests(const boost::program_options::variables_map& vm, Document& doc);

/// The limits of every simulation a command runs, from the options above; `interrupt` stops
/// them (SIGINT, SIGTERM).
[[nodiscard]] RunLimits run_limits(const boost::program_options::variables_map& vm,
                                   const volatile std::sig_atomic_t* interrupt);

/// --percentiles and --export, checked (an unknown format or a bad percentile: InputError).
[[nodiscard]] TokenOutputs token_outputs(const boost::program_options::variables_map& vm);

}  // namespace servesim
