#pragma once
// The servesim command line. run_cli() is main() without the process: tests call it directly.
// Exit status: 0 success, 2 bad input or usage (with a message on `err`), 3 out of memory (refused
// before the run, or an allocation failed: nothing written), 1 internal error,
// 128 + N when signal N stopped a command before it finished (`run` instead writes its results
// marked partial and exits 0). docs/errors.md#signals.
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

namespace servesim {

/// `interrupt`, when given, is polled by every command's long loops: once non-zero (main's handler
/// of SIGINT, SIGTERM and SIGHUP stores the signal's number) `run` stops and writes its partial
/// results, and any other command stops, removes what it was writing and exits 128 + the number.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const volatile std::sig_atomic_t* interrupt = nullptr);

/// The subcommands of the command table, sorted ("calibrate", ..., "trace"); tests walk it.
[[nodiscard]] std::vector<std::string> command_names();

}  // namespace servesim
