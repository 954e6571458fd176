#pragma once
// `servesim report RESULT_DIR... [--out report.html]`: the command line of the HTML report
// (docs/report.md); the page itself is report/'s.
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

namespace servesim {

/// `servesim report RUN_DIR... [--out report.html]`. Throws InputError.
int cmd_report(const std::vector<std::string>& args, std::ostream& out,
               const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
