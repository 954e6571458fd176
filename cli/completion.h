#pragma once
// The bash completion script and the man page of servesim, generated from the command table
// (cli/cli.cpp), so that a new command or option appears in both without more work
// (docs/cli.md#completion-and-man-page).
#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace servesim {

/// A bash completion script: completes the subcommands, `trace`'s two, each command's options
/// (and, after --format, --form, --export, --hardware and so on, nothing: their values are
/// free), `list`'s groups and `completion`'s shells, and files for positional arguments.
[[nodiscard]] std::string bash_completion(const std::vector<CommandLine>& commands,
                                          const std::vector<std::string>& list_groups);

/// servesim.1 in roff (man(7) macros): NAME, SYNOPSIS, DESCRIPTION, every subcommand with its
/// usage, arguments and options, the common options, EXIT STATUS and FILES.
[[nodiscard]] std::string man_page(const std::vector<CommandLine>& commands,
                                   const std::string& version);

}  // namespace servesim
