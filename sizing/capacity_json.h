#pragma once
// capacity.json (docs/sizing.md#capacity): what `servesim capacity` writes and the Python
// module's capacity() returns, from one place.
#include <nlohmann/json.hpp>
#include <string>

#include "sizing/capacity.h"

namespace servesim {

/// One probe's row: its rate, whether it met the SLO, its throughput, p99 latencies,
/// attainment, goodput and rejections.
[[nodiscard]] nlohmann::ordered_json capacity_probe_json(const CapacityProbe& p);

/// The whole search: the config's name, the SLO, the tolerance, the capacity found, the first
/// failing probe and every probe in order.
[[nodiscard]] nlohmann::ordered_json capacity_json(const std::string& config,
                                                   const CapacityResult& r,
                                                   const CapacityOptions& o);

}  // namespace servesim
