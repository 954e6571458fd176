#pragma once
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace servesim {

[[nodiscard]] CommandLine calibrate_command_line();

/// `servesim calibrate MEASUREMENTS [options]`: fits step-time models to measured latencies,
/// reports their errors and, with --out DIR, writes the best to DIR/step_time.yaml. Throws
/// InputError.
int cmd_calibrate(const std::vector<std::string>& args, std::ostream& out,
                  const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
