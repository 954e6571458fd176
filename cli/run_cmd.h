#pragma once
// `servesim run [CONFIG.yaml]`: one scenario into the --out folder (summary.json, requests.csv
// and what the options add), in one process or, under mpirun in a build with MPI, over the
// ranks (rank 0 writes and prints; docs/cluster.md#parallel). docs/cli.md#run.
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace servesim {

[[nodiscard]] CommandLine run_command_line();

/// The command: parses `args`, prints to `out` (notes and warnings to stderr). Throws
/// InputError on bad arguments or a bad config, before anything is written.
int cmd_run(const std::vector<std::string>& args, std::ostream& out,
            const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
