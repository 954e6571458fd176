#pragma once
// The servesim command line. run_cli() is main() without the process: tests call it directly.
// Exit status: 0 success, 2 bad input or usage (with a message on `err`), 1 internal error.
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

namespace servesim {

/// `interrupt`, when given, is polled by runs: once non-zero (main's SIGINT handler sets it) a
/// run stops and writes its partial results.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
