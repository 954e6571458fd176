#pragma once
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

namespace servesim {

/// `servesim trace stats FILE [options]`: streams a trace through the workload.trace reader and
/// prints its rate, burstiness, length distributions and ideal prefix reuse
/// (docs/workloads.md#inspecting-and-generating-traces); --json also writes them to a file.
/// `servesim trace gen CONFIG --out FILE.csv [options]`: writes a scenario's workload as a
/// servesim CSV trace. `args` excludes "trace". Throws InputError on bad arguments or input.
int cmd_trace(const std::vector<std::string>& args, std::ostream& out,
              const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
