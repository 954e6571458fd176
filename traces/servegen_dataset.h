#pragma once
// ServeGen's per-client dataset file (chunk-N-dataset.json): one pair of empirical length PMFs
// (input and output tokens) per period, each stored as a Python dict literal. Read by
// traces/servegen.cpp; docs/workloads.md (ServeGen) gives the format and every message.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace servesim::servegen {

/// An empirical PMF over token counts, kept as its keys and cumulative probabilities.
struct Pmf {
  std::vector<int32_t> tokens;  // ascending
  std::vector<double> cumulative;
  /// The smallest k whose cumulative probability exceeds u times the total. REQUIRES: u in [0,1).
  [[nodiscard]] int32_t quantile(double u) const {
    const double target = u * cumulative.back();
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), target);
    return tokens[std::min<size_t>(it - cumulative.begin(), tokens.size() - 1)];
  }
};

/// One period of the dataset: the PMFs that hold from `start_s` until the next period.
struct Period {
  double start_s = 0;
  Pmf input, output;
};

/// Every period with data, in order of start. Periods whose input or output PMF is "{}" are
/// left out (as ServeGen does): a window in one takes the latest period before it with data.
/// Throws InputError naming the file, the period and the field on any problem.
[[nodiscard]] std::vector<Period> read_dataset(const std::string& path);

}  // namespace servesim::servegen
