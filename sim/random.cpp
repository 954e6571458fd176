#include "sim/random.h"

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

}  // namespace servesim
