#pragma once
// Log-log interpolation over measured sizes, shared by the operator tables and the operator step
// model's precomputed curves (docs/config.md, "kind: operator").
//
// Between two measured sizes, log(latency) is linear in log(size). Below the smallest size the
// smallest size's latency holds (a kernel that small is launch-bound). Above the largest, the
// last segment's slope continues, never below `min_slope`; the last segment runs from the
// largest size back to the largest one at most half of it (so that a tile-step pair such as
// 256/257 does not set the slope of everything beyond), or to the smallest when none is.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace servesim {

/// Where log(x) falls on a sorted axis of log sizes (size >= 1).
struct LogBracket {
  size_t lo = 0;
  size_t hi = 0;
  double t = 0;       ///< between lo and hi: the fraction of the way from lo to hi
  double beyond = 0;  ///< > 0: past the last point by this much in log(x) (lo, hi: last segment)
};

inline constexpr double k_ln2 = 0.69314718055994530942;

/// REQUIRES: `ln_axis` sorted, strictly increasing, not empty.
[[nodiscard]] inline LogBracket log_bracket(const std::vector<double>& ln_axis, double ln_x) {
  LogBracket b;
  const size_t last = ln_axis.size() - 1;
  if (ln_x <= ln_axis.front() || last == 0) {
    b.lo = b.hi = 0;
    if (last == 0 && ln_x > ln_axis.front()) b.beyond = ln_x - ln_axis.front();
    return b;
  }
  if (ln_x > ln_axis[last]) {
    b.hi = last;
    // The last segment spans at least a factor of 2 where the axis allows.
    const auto it = std::upper_bound(ln_axis.begin(), ln_axis.end(), ln_axis[last] - k_ln2 + 1e-12);
    b.lo = it == ln_axis.begin() ? 0 : static_cast<size_t>(it - ln_axis.begin()) - 1;
    b.beyond = ln_x - ln_axis[last];
    return b;
  }
  const auto it = std::lower_bound(ln_axis.begin(), ln_axis.end(), ln_x);
  b.hi = static_cast<size_t>(it - ln_axis.begin());
  b.lo = b.hi - 1;
  b.t = (ln_x - ln_axis[b.lo]) / (ln_axis[b.hi] - ln_axis[b.lo]);
  return b;
}

/// log(y) at the bracketed point from log(y) at its two ends (y_lo at b.lo, y_hi at b.hi).
[[nodiscard]] inline double log_blend(const LogBracket& b, const std::vector<double>& ln_axis,
                                      double ln_y_lo, double ln_y_hi, double min_slope) {
  if (b.beyond > 0) {
    double slope = min_slope;
    if (b.hi > b.lo)
      slope = std::max(min_slope, (ln_y_hi - ln_y_lo) / (ln_axis[b.hi] - ln_axis[b.lo]));
    return ln_y_hi + slope * b.beyond;
  }
  if (b.lo == b.hi) return ln_y_lo;
  return ln_y_lo + b.t * (ln_y_hi - ln_y_lo);
}

/// y(x) through measured points (x >= 1, y > 0), interpolated as above.
class LogCurve {
 public:
  /// REQUIRES: xs strictly increasing, same length as ys, not empty; all values > 0.
  LogCurve(const std::vector<double>& xs, const std::vector<double>& ys, double min_slope)
      : m_min_slope(min_slope) {
    for (size_t i = 0; i < xs.size(); ++i) {
      m_ln_x.push_back(std::log(xs[i]));
      m_ln_y.push_back(std::log(ys[i]));
    }
  }
  /// The same from n points at xs[0 .. n) and ys[0 .. n).
  LogCurve(const double* xs, const double* ys, size_t n, double min_slope)
      : m_min_slope(min_slope) {
    m_ln_x.reserve(n);
    m_ln_y.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      m_ln_x.push_back(std::log(xs[i]));
      m_ln_y.push_back(std::log(ys[i]));
    }
  }
  [[nodiscard]] double at(double x) const { return at_ln(std::log(std::max(x, 1e-300))); }
  /// at(x) from ln_x = log(max(x, 1e-300)), for a caller that reads several curves at one x.
  [[nodiscard]] double at_ln(double ln_x) const {
    const LogBracket b = log_bracket(m_ln_x, ln_x);
    return std::exp(log_blend(b, m_ln_x, m_ln_y[b.lo], m_ln_y[b.hi], m_min_slope));
  }
  /// at(max(1, i)) for i = 0, 1, ..., n - 1, to the bit: the bracket inside the axis is found
  /// by walking up it rather than by a search for each size.
  [[nodiscard]] std::vector<double> at_counts(size_t n) const {
    std::vector<double> out;
    out.reserve(n);
    size_t hi = 0;  // the first point at or above log(x), as log_bracket's lower_bound finds it
    for (size_t i = 0; i < n; ++i) {
      const double ln_x = std::log(std::max(static_cast<double>(i), 1.0));
      LogBracket b;
      if (m_ln_x.size() > 1 && ln_x > m_ln_x.front() && ln_x <= m_ln_x.back()) {
        while (m_ln_x[hi] < ln_x) ++hi;
        b.hi = hi;
        b.lo = hi - 1;
        b.t = (ln_x - m_ln_x[b.lo]) / (m_ln_x[b.hi] - m_ln_x[b.lo]);
      } else {
        b = log_bracket(m_ln_x, ln_x);
      }
      out.push_back(std::exp(log_blend(b, m_ln_x, m_ln_y[b.lo], m_ln_y[b.hi], m_min_slope)));
    }
    return out;
  }

 private:
  std::vector<double> m_ln_x, m_ln_y;
  double m_min_slope;
};

/// z(x, y) on a full grid, interpolated log-log along y for the two bracketing x rows, then
/// along x between them (bilinear in logs inside the grid).
class LogGrid {
 public:
  /// REQUIRES: xs, ys strictly increasing and not empty; z[i * ys.size() + j] = z(xs[i], ys[j]) >
  /// 0.
  LogGrid(const std::vector<double>& xs, const std::vector<double>& ys,
          const std::vector<double>& z, double min_slope)
      : m_min_slope(min_slope) {
    for (double x : xs) m_ln_x.push_back(std::log(x));
    for (double y : ys) m_ln_y.push_back(std::log(y));
    for (double v : z) m_ln_z.push_back(std::log(v));
  }
  [[nodiscard]] double at(double x, double y) const { return at(bracket_x(x), y); }
  /// Where x falls, for at(bx, y): a caller may keep the brackets of the x it meets often.
  [[nodiscard]] LogBracket bracket_x(double x) const {
    return log_bracket(m_ln_x, std::log(std::max(x, 1e-300)));
  }
  [[nodiscard]] double at(const LogBracket& bx, double y) const { return at(bx, bracket_y(y)); }
  /// Where y falls, for at(bx, by).
  [[nodiscard]] LogBracket bracket_y(double y) const {
    return log_bracket(m_ln_y, std::log(std::max(y, 1e-300)));
  }
  [[nodiscard]] double at(const LogBracket& bx, const LogBracket& by) const {
    return at_rows(bx, ln_row(bx.lo, by), ln_row(bx.hi, by));
  }
  /// The two steps of at(bx, by), for a caller that tabulates many points (models/binned_grid.h):
  /// log(z) along row i (the grid's x number i) at by, then z between two rows' values at bx.
  [[nodiscard]] double ln_row(size_t i, const LogBracket& by) const {
    const size_t ny = m_ln_y.size();
    return log_blend(by, m_ln_y, m_ln_z[i * ny + by.lo], m_ln_z[i * ny + by.hi], m_min_slope);
  }
  [[nodiscard]] double at_rows(const LogBracket& bx, double ln_lo, double ln_hi) const {
    return std::exp(log_blend(bx, m_ln_x, ln_lo, ln_hi, m_min_slope));
  }
  /// The grid's x count (rows for ln_row).
  [[nodiscard]] size_t rows() const { return m_ln_x.size(); }

 private:
  std::vector<double> m_ln_x, m_ln_y, m_ln_z;
  double m_min_slope;
};

}  // namespace servesim
