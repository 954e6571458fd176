#include "models/binned_grid.h"

#include <algorithm>
#include <cmath>

namespace servesim {

BinnedGrid::BinnedGrid(LogGrid grid, int x_octaves, int y_octaves)
    : m_grid(std::move(grid)),
      m_x_end(static_cast<double>(uint64_t{1} << x_octaves)),
      m_y_end(static_cast<double>(uint64_t{1} << y_octaves)),
      m_nx((static_cast<size_t>(x_octaves) << k_x_bits) + 1),
      m_ny((static_cast<size_t>(y_octaves) << k_y_bits) + 1),
      m_z(new double[m_nx * m_ny]),
      m_lazy(std::make_unique<Lazy>()) {
  // The grid's rows' values along y, taken once for each of the grid's rows rather than twice
  // for every point, when a table row first needs them; the table's rows are filled from them
  // on their first use (fill_rows).
  Lazy& z = *m_lazy;
  z.row.assign(m_nx, k_empty);
  z.pair = std::make_unique<std::atomic<uint8_t>[]>(m_nx);  // all k_empty
  m_pair = z.pair.get();
  z.by.resize(m_ny);
  for (size_t j = 0; j < m_ny; ++j) z.by[j] = m_grid.bracket_y(point<k_y_bits>(j));
  z.ln_rows.resize(m_grid.rows() * m_ny);
  z.ln_row_done.assign(m_grid.rows(), 0);
  m_x_bins.resize(size_t{1} << x_octaves);
  for (size_t x = 0; x < m_x_bins.size(); ++x)
    m_x_bins[x] = bin<k_x_bits>(std::max(1.0, static_cast<double>(x)));
}

uint8_t BinnedGrid::fill_rows(size_t i) const {
  Lazy& z = *m_lazy;
  const std::lock_guard<std::mutex> lock(z.fill);
  for (size_t row = i; row <= i + 1; ++row) {
    if (z.row[row] != k_empty) continue;
    const LogBracket bx = m_grid.bracket_x(point<k_x_bits>(row));
    for (const size_t r : {bx.lo, bx.hi}) {
      if (z.ln_row_done[r] != 0) continue;
      for (size_t j = 0; j < m_ny; ++j) z.ln_rows[r * m_ny + j] = m_grid.ln_row(r, z.by[j]);
      z.ln_row_done[r] = 1;
    }
    const double* lo = &z.ln_rows[bx.lo * m_ny];
    const double* hi = &z.ln_rows[bx.hi * m_ny];
    double* out = &m_z[row * m_ny];
    bool all = true;
    for (size_t j = 0; j < m_ny; ++j) {
      out[j] = m_grid.at_rows(bx, lo[j], hi[j]);
      all = all && std::isfinite(out[j]);
    }
    z.row[row] = all ? k_finite : k_other;
  }
  const uint8_t s = z.row[i] == k_finite && z.row[i + 1] == k_finite ? k_finite : k_other;
  // Published after the rows' values: a lookup that reads it (acquire) reads them filled.
  z.pair[i].store(s, std::memory_order_release);
  return s;
}

std::vector<double> BinnedGrid::at_one_counts(size_t n) const {
  std::vector<double> out;  // reserved, not zero-filled: every entry is written once
  out.reserve(n);
  if (n == 0) return out;
  (void)rows_at(0);
  const double* r0 = m_z.get();  // at_one reads row 0 only
  // Below 2^k_y_bits a sub-bin is narrower than 1: each integer is binned as at_one bins it.
  constexpr size_t k_sub = size_t{1} << k_y_bits;
  size_t y = 0;
  for (; y < n && y < k_sub; ++y) {
    const Bin by = bin<k_y_bits>(std::max(1.0, static_cast<double>(y)));
    out.push_back(r0[by.index] + by.frac * (r0[by.index + 1] - r0[by.index]));
  }
  // From octave k_y_bits on, sub-bin `index` holds the w integers p, p + 1, ..., p + w - 1, at
  // the fractions k / w (w a power of two: k times 1 / w is exact, as bin()'s fraction is).
  for (size_t index = k_sub * k_y_bits; y < n; ++index) {
    const size_t w = size_t{1} << (index / k_sub - k_y_bits);
    const double inv_w = 1.0 / static_cast<double>(w);
    const double lo = r0[index], step = r0[index + 1] - r0[index];
    const size_t end = std::min(n, y + w);
    double k = 0;  // below 2^53 (n <= y_end()), so counted exactly
    for (; y < end; ++y, k += 1) out.push_back(lo + (k * inv_w) * step);
  }
  return out;
}

size_t BinnedGrid::rows_filled() const {
  const std::lock_guard<std::mutex> lock(m_lazy->fill);
  size_t n = 0;
  for (const uint8_t r : m_lazy->row) n += r != k_empty ? 1 : 0;
  return n;
}

double BinnedGrid::beyond(double x, double y) const { return m_grid.at(x, y); }

}  // namespace servesim
