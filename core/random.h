#pragma once
// The simulation's one random generator. Draws are written out here (not with <random>'s
// distributions, whose algorithms differ between standard libraries) so the same seed gives the
// same workload with any compiler.
#include <cstdint>
#include <random>

namespace servesim {

class Rng {
 public:
  explicit Rng(uint64_t seed) : m_engine(seed) {}
  /// Uniform in [0, 1), 53 random bits.
  double uniform01();
  /// Uniform integer in [lo, hi], both inclusive. REQUIRES: lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi);
  /// Exponential with the given rate (mean 1/rate). REQUIRES: rate > 0.
  double exponential(double rate);
  /// Standard normal (Box-Muller; the second value is discarded to keep draws stateless).
  double normal();
  /// Gamma with the given shape and scale 1 (mean shape, variance shape). REQUIRES: shape > 0.
  /// Marsaglia and Tsang's squeeze-and-reject method (ACM TOMS 26(3), 2000) on normal() and
  /// uniform01(); a shape below 1 is boosted: Gamma(k) = Gamma(k + 1) * U^(1/k). The number of
  /// draws it takes varies (about 1.05 normals per value for shape >= 1).
  double gamma(double shape);
  /// Weibull with the given shape and scale 1: E^(1/shape) for E = exponential(1), one uniform
  /// per value (mean Gamma(1 + 1/shape)). REQUIRES: shape > 0.
  double weibull(double shape);

 private:
  std::mt19937_64 m_engine;  // its output sequence is fixed by the C++ standard
};

}  // namespace servesim
