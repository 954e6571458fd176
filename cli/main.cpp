#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace {
// The one global: a signal handler can only reach static storage. Runs poll it (RunLimits).
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }
}  // namespace

int main(int argc, char** argv) {
  // Diagnostics go to stderr; results go to files and the summary to stdout.
  spdlog::set_default_logger(spdlog::stderr_color_mt("servesim"));
  spdlog::set_level(spdlog::level::warn);
  if (const char* lvl = std::getenv("SERVESIM_LOG"))
    spdlog::set_level(spdlog::level::from_str(lvl));
  std::vector<std::string> args(argv + 1, argv + argc);
  std::signal(SIGINT, on_sigint);
  return servesim::run_cli(args, std::cout, std::cerr, &g_interrupted);
}
