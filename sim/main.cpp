#include <iostream>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "sim/cli.h"

int main(int argc, char** argv) {
  // Diagnostics go to stderr; results go to files and the summary to stdout.
  spdlog::set_default_logger(spdlog::stderr_color_mt("servesim"));
  spdlog::set_level(spdlog::level::warn);
  if (const char* lvl = std::getenv("SERVESIM_LOG")) spdlog::set_level(spdlog::level::from_str(lvl));
  std::vector<std::string> args(argv + 1, argv + argc);
  return servesim::run_cli(args, std::cout, std::cerr);
}
