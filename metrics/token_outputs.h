#pragma once
// What `--percentiles` and `--export` ask of a run, one meaning on every command that runs
// simulations (run, capacity, size) and in Python (docs/cli.md#conventions): the latency
// statistics of TTFT, TPOT, ITL and E2E at further percentiles, and results in other tools'
// layouts. Both need every token's time (TokenTimes, metrics/exports.h), which a run keeps
// only when one of them is asked for, so runs that ask for neither are not slowed.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "metrics/exports.h"

namespace servesim {

struct TokenOutputs {
  std::vector<double> percentiles;           ///< --percentiles; empty: not given
  std::vector<const ExportFormat*> exports;  ///< --export, each once, in the order given

  /// Whether a run must keep a TokenTimes for these.
  [[nodiscard]] bool wanted() const { return !percentiles.empty() || !exports.empty(); }
};

/// The formats named (each once, first mention first). Throws InputError naming `option` and
/// the valid names for an unknown one.
[[nodiscard]] std::vector<const ExportFormat*> export_list(const std::vector<std::string>& names,
                                                           const std::string& option);

/// `--percentiles --json`'s "latency_s": {ttft, tpot, itl, e2e}, each {count, mean, median,
/// std, max, percentiles: {p50: ...}}, in seconds.
[[nodiscard]] nlohmann::ordered_json latency_json(const LatencyReport& r);

}  // namespace servesim
