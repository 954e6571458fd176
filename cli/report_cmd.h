#pragma once
// `servesim report RESULT_DIR... [--out DIR]`: the command line of the HTML report, written to
// DIR/report.html (docs/report.md); the page itself is report/'s.
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace servesim {

[[nodiscard]] CommandLine report_command_line();

/// `servesim report RUN_DIR... [--out DIR]`. Throws InputError.
int cmd_report(const std::vector<std::string>& args, std::ostream& out,
               const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
