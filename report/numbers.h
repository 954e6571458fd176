#pragma once
// Numbers for the report's embedded JSON: a few significant digits keep the page small.
#include <cmath>
#include <nlohmann/json.hpp>

namespace servesim {

/// `v` rounded to `digits` significant digits (0, infinities and NaN unchanged).
[[nodiscard]] inline double round_sig(double v, int digits = 5) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale =
      std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

/// round_sig(v) as JSON, or null when `v` is not finite.
[[nodiscard]] inline nlohmann::json json_number(double v, int digits = 5) {
  return std::isfinite(v) ? nlohmann::json(round_sig(v, digits)) : nlohmann::json(nullptr);
}

}  // namespace servesim
