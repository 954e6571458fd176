#pragma once
// `servesim capacity CONFIG`: the highest request rate at which a scenario still meets its SLOs,
// found by find_capacity (sizing/capacity.h); docs/sizing.md#capacity.
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cli_options.h"
#include "sizing/capacity.h"

namespace servesim {

[[nodiscard]] CommandLine capacity_command_line();

/// The command: parses `args`, prints to `out`, writes capacity.json and summary.json (the run at
/// the capacity) into --out. Throws InputError on bad arguments or a bad config.
int cmd_capacity(const std::vector<std::string>& args, std::ostream& out,
                 const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
