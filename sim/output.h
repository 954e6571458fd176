#pragma once
// Results as files. Every file is written under a temporary name and renamed into place only
// once all of them are written, so an interrupted run never leaves a file that looks complete.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "sim/metrics.h"
#include "sim/request.h"

namespace servesim {

/// requests.csv, one row per request in id order. Times in seconds with nanosecond digits.
[[nodiscard]] std::string requests_csv(const std::vector<Request>& requests);
/// summary.json: the metrics, the seed and the resolved config.
[[nodiscard]] nlohmann::ordered_json summary_json(const Summary& s, const YAML::Node& config,
                                                  uint64_t seed);
/// The table printed after a run.
[[nodiscard]] std::string summary_table(const Summary& s);
/// A YAML tree as JSON (numbers and booleans typed, everything else strings).
[[nodiscard]] nlohmann::ordered_json yaml_to_json(const YAML::Node& node);

/// Writes name -> contents into `dir` (created if needed), all or nothing as far as the
/// filesystem allows. Throws InputError naming the directory if it cannot be written.
void write_files(const std::string& dir,
                 const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace servesim
