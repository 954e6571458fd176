#pragma once
// Arrival processes of a synthetic workload (its `arrival` map): poisson, fixed, gamma, onoff,
// daily. docs/workloads-synthetic.md defines each kind; read_arrival_process() checks the keys.
//
// CONTRACT: next_s() returns the next arrival in seconds after the workload's start_s,
// non-decreasing from call to call, and takes its randomness only from the Rng it is given
// (never from a std:: distribution), so a seed gives the same arrivals on every platform. A
// process may draw any number of values per arrival; it never returns past k_max_arrival_s
// without stopping there (the caller turns that into an InputError).
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/random.h"

namespace servesim {

/// Simulated time is int64 nanoseconds (up to 9.2e9 s); arrivals stay below this, as in traces.
inline constexpr double k_max_arrival_s = 9.0e9;

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  [[nodiscard]] virtual double next_s(Rng& rng) = 0;
};

struct ArrivalConfig {
  std::unique_ptr<ArrivalProcess> process;
  double mean_rate_per_s = 1;   ///< long-run arrivals per second
  bool first_at_start = false;  ///< the first arrival is at start_s (fixed), not a gap after it
  /// The key a "too slow for the time limit" message points at, and the words for the rate.
  std::string rate_key = "rate_per_s";
  std::string rate_words = "at this rate";
};

/// Reads the `arrival` map. `start_s` is where the workload starts on the simulated clock (a
/// daily curve is a function of the clock, not of the time since start_s).
[[nodiscard]] ArrivalConfig read_arrival_process(const Cfg& arrival, double start_s);
[[nodiscard]] std::vector<std::string> arrival_kind_names();

}  // namespace servesim
