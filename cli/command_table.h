#pragma once
// The command table's command lines (cli/cli.cpp), for what is generated from it: `servesim
// --help`, the completion script, the man page and the tests that check every command follows
// the same conventions (docs/cli.md#conventions).
#include <vector>

#include "cli/cli_options.h"

namespace servesim {

/// The command line of every subcommand in the table's order, `trace stats` and `trace gen`
/// each one.
[[nodiscard]] std::vector<CommandLine> command_lines();

}  // namespace servesim
