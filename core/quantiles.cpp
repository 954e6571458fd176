#include "core/quantiles.h"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {

// Binary exponents covered (values in [2^(k_min_exp-1), 2^k_max_exp)); smaller values share
// bucket 0 and larger ones the last bucket, whose midpoints are clamped to [min, max] anyway.
// Seconds from about 1e-12 to 1e12 fall inside.
constexpr int k_min_exp = -40;
constexpr int k_max_exp = 40;
constexpr size_t k_per_exp = size_t{1} << QuantileSketch::k_sub_bits;
constexpr size_t k_buckets = static_cast<size_t>(k_max_exp - k_min_exp) * k_per_exp;

size_t bucket_of(double v) {
  if (!(v > 0)) return 0;
  int e = 0;
  const double f = std::frexp(v, &e);  // v = f * 2^e, f in [0.5, 1)
  if (e <= k_min_exp) return 0;
  if (e > k_max_exp) return k_buckets - 1;
  const auto sub = static_cast<size_t>((f - 0.5) * 2.0 * static_cast<double>(k_per_exp));
  return static_cast<size_t>(e - 1 - k_min_exp) * k_per_exp + std::min(sub, k_per_exp - 1);
}

}  // namespace

void QuantileSketch::add(double v) {
  if (m_count == 0) {
    m_min = m_max = v;
  } else {
    m_min = std::min(m_min, v);
    m_max = std::max(m_max, v);
  }
  ++m_count;
  m_sum += v;
  if (m_histogram_mode) {
    bump(v);
    return;
  }
  if (!m_values.empty() && v < m_values.back()) m_sorted = false;
  m_values.push_back(v);
  if (m_values.size() > m_limit) to_histogram();
}

void QuantileSketch::bump(double v) { ++m_buckets[bucket_of(v)]; }

void QuantileSketch::to_histogram() {
  m_histogram_mode = true;
  m_buckets.assign(k_buckets, 0);
  for (double v : m_values) bump(v);
  std::vector<double>().swap(m_values);
}

double QuantileSketch::bucket_mid(size_t b) const {
  const int e = static_cast<int>(b / k_per_exp) + 1 + k_min_exp;
  const double sub = static_cast<double>(b % k_per_exp);
  const double lo = std::ldexp(0.5 + sub / (2.0 * static_cast<double>(k_per_exp)), e);
  const double hi = std::ldexp(0.5 + (sub + 1) / (2.0 * static_cast<double>(k_per_exp)), e);
  return std::clamp(0.5 * (lo + hi), m_min, m_max);
}

double QuantileSketch::order_statistic(int64_t k) const {
  if (k <= 0) return m_min;
  if (k >= m_count - 1) return m_max;
  int64_t seen = 0;
  for (size_t b = 0; b < m_buckets.size(); ++b) {
    seen += m_buckets[b];
    if (seen > k) return bucket_mid(b);
  }
  return m_max;
}

double QuantileSketch::percentile(double p) {
  if (m_count == 0) return 0.0;
  const double pos = p / 100.0 * static_cast<double>(m_count - 1);
  const auto lo = static_cast<int64_t>(std::floor(pos));
  const int64_t hi = std::min(lo + 1, m_count - 1);
  const double frac = pos - static_cast<double>(lo);
  double a = 0, b = 0;
  if (m_histogram_mode) {
    a = order_statistic(lo);
    b = order_statistic(hi);
  } else {
    if (!m_sorted) {
      std::sort(m_values.begin(), m_values.end());
      m_sorted = true;
    }
    a = m_values[static_cast<size_t>(lo)];
    b = m_values[static_cast<size_t>(hi)];
  }
  return a + frac * (b - a);
}

}  // namespace servesim
