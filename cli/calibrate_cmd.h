#pragma once
#include <csignal>
#include <iosfwd>
#include <string>
#include <vector>

namespace servesim {

/// `servesim calibrate MEASUREMENTS [options]`: fits step-time models to measured latencies,
/// reports their errors and writes the best as a step_time YAML file. Throws InputError.
int cmd_calibrate(const std::vector<std::string>& args, std::ostream& out,
                  const volatile std::sig_atomic_t* interrupt = nullptr);

}  // namespace servesim
