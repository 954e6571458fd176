#include "core/units.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace servesim {
namespace {

/// Refuses a number at `key` above `p`'s range (or below a positive minimum) with its unit;
/// leaves anything else (absent, not a number, negative) to Cfg's own reader and messages.
void check_plausible(const Cfg& c, const std::string& key, const units::Plausible& p) {
  if (!c.is_scalar(key)) return;
  const std::string s = c.node(key).Scalar();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) return;
  const RealRange& r = p.range;
  const bool low = r.min_exclusive ? !(v > r.min) : !(v >= r.min);
  const char* slip = nullptr;
  if (v > r.max)
    slip = p.slip;
  else if (low && r.min > 0)
    slip = p.slip_below;
  else
    return;  // in range, or below a minimum of 0: Cfg's own message ("must be > 0")
  c.fail(key, fmt::format("not a plausible {} (a {}){}", p.unit, describe(r),
                          slip != nullptr ? fmt::format("; {}", slip) : std::string()));
}

}  // namespace

double plausible_real(const Cfg& c, const std::string& key, const units::Plausible& p) {
  check_plausible(c, key, p);
  return c.get_real(key, p.range);  // a missing key: the required-key message
}

double plausible_real(const Cfg& c, const std::string& key, double def, const units::Plausible& p) {
  check_plausible(c, key, p);
  return c.get_real(key, def, p.range);
}

std::optional<double> optional_plausible_real(const Cfg& c, const std::string& key,
                                              const units::Plausible& p) {
  check_plausible(c, key, p);
  return c.optional_real(key, p.range);
}

}  // namespace servesim
