#pragma once
// Stopping on a signal. main() (cli/main.cpp) stores the number of the first SIGINT, SIGTERM or
// SIGHUP it receives in one flag; every long loop of every command polls that flag, passed down
// as `const volatile std::sig_atomic_t*` (null: never interrupted, as in tests and library use).
// `servesim run` stops its simulation and writes results marked partial; every other command
// throws Interrupted, which removes what it was writing (its temporaries) on the way out.
#include <fmt/format.h>

#include <csignal>
#include <stdexcept>
#include <string>

namespace servesim {

/// "SIGINT", "SIGTERM", "SIGHUP", or "signal N".
[[nodiscard]] inline std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return fmt::format("signal {}", signal);
  }
}

/// A command stopped by a signal before it finished. run_cli prints the message and exits with
/// 128 + the signal's number (130 for SIGINT), the shell's convention for a command a signal
/// stopped; nothing the command was writing is left behind.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal)
      : std::runtime_error(
            fmt::format("interrupted by {}; nothing was written", signal_name(signal))),
        m_signal(signal) {}
  [[nodiscard]] int signal() const { return m_signal; }

 private:
  int m_signal;
};

/// Throws Interrupted once `flag` (may be null) is non-zero. One volatile read: cheap enough for
/// every row of a loop.
inline void check_interrupt(const volatile std::sig_atomic_t* flag) {
  if (flag && *flag) throw Interrupted(*flag);
}

}  // namespace servesim
