#pragma once
// Percentiles of a stream of non-negative values in bounded memory.
//
// Up to `exact_limit` values are kept and percentiles are exact (numpy's default linear
// interpolation between order statistics, as vLLM's benchmark reports them). Past that, every
// value moves into a log-linear histogram of 2^k_sub_bits buckets per power of two, and a
// percentile is the midpoint of the bucket that holds the order statistic: within a relative
// error of 2^-(k_sub_bits + 1) (0.05%) of an exact value in that bucket. Count, mean and max are
// always exact. Memory: 8 bytes a value up to the limit, then a fixed ~650 KB.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

class QuantileSketch {
 public:
  static constexpr int k_sub_bits = 10;
  /// Relative error bound of a percentile once the sketch is no longer exact.
  static constexpr double k_relative_error = 1.0 / (2 << k_sub_bits);
  static constexpr size_t k_default_exact_limit = size_t{1} << 21;

  explicit QuantileSketch(size_t exact_limit = k_default_exact_limit) : m_limit(exact_limit) {}

  /// REQUIRES: v >= 0 and finite.
  void add(double v);

  [[nodiscard]] int64_t count() const { return m_count; }
  [[nodiscard]] double mean() const { return m_count ? m_sum / static_cast<double>(m_count) : 0; }
  [[nodiscard]] double max() const { return m_max; }
  [[nodiscard]] bool exact() const { return !m_histogram_mode; }
  /// p in [0, 100]; 0 when empty. Sorts the kept values the first time (hence not const).
  [[nodiscard]] double percentile(double p);

 private:
  void to_histogram();
  void bump(double v);
  [[nodiscard]] double bucket_mid(size_t b) const;
  [[nodiscard]] double order_statistic(int64_t k) const;

  size_t m_limit;
  int64_t m_count = 0;
  double m_sum = 0, m_min = 0, m_max = 0;
  std::vector<double> m_values;
  bool m_sorted = true;
  bool m_histogram_mode = false;
  std::vector<int64_t> m_buckets;
};

}  // namespace servesim
