#pragma once
// `servesim size SWEEP.yaml`: simulate every point of a sizing sweep (sizing/sweep.h) and write
// points.csv and summary.json (docs/sizing.md). Points run on a pool of threads (--jobs) and,
// under an MPI launcher in a build with MPI, are split over the ranks round-robin by index;
// rank 0 writes the results, identical to a single-threaded run's.
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace servesim {

[[nodiscard]] CommandLine size_command_line();

/// The command: parses `args`, prints to `out` (progress to stderr). Throws InputError on bad
/// arguments or a bad sweep file, before anything is written.
int cmd_size(const std::vector<std::string>& args, std::ostream& out,
             const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
