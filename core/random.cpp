#include "core/random.h"

#include <cmath>
#include <numbers>

namespace servesim {

double Rng::uniform01() { return static_cast<double>(m_engine() >> 11) * 0x1.0p-53; }

int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<int64_t>(m_engine());  // the full 64-bit range
  // Rejection sampling removes modulo bias.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % span);
  uint64_t x = m_engine();
  while (x >= limit) x = m_engine();
  return lo + static_cast<int64_t>(x % span);
}

double Rng::exponential(double rate) { return -std::log1p(-uniform01()) / rate; }

double Rng::normal() {
  double u1 = uniform01();
  while (u1 <= 0.0) u1 = uniform01();
  const double u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::gamma(double shape) {
  if (shape < 1.0) {
    // Boost: draw Gamma(shape + 1), then scale by U^(1/shape), in logs so that a tiny shape
    // underflows to a gap of 0 rather than NaN.
    const double g = gamma(shape + 1.0);
    const double u = uniform01();
    return u <= 0.0 ? 0.0 : g * std::exp(std::log(u) / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = normal();
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = uniform01();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v;  // the squeeze: no logarithm needed
    if (u > 0.0 && std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v;
  }
}

double Rng::weibull(double shape) { return std::pow(exponential(1.0), 1.0 / shape); }

}  // namespace servesim
