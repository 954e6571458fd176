#pragma once
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace servesim {

/// `servesim trace stats FILE [options]`: streams a trace through the workload.trace reader and
/// prints its rate, burstiness, length distributions and ideal prefix reuse
/// (docs/workloads.md#inspecting-and-generating-traces); --out DIR also writes them to
/// DIR/trace_stats.json. `servesim trace gen CONFIG [--out DIR] [options]`: writes a scenario's
/// workload as a servesim CSV trace, DIR/trace.csv. `args` excludes "trace". Throws InputError on
/// bad arguments or input.
[[nodiscard]] CommandLine trace_stats_command_line();
[[nodiscard]] CommandLine trace_gen_command_line();

int cmd_trace(const std::vector<std::string>& args, std::ostream& out,
              const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
