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
  // for every point; the table's rows are filled from them on their first use (fill_rows).
  Lazy& z = *m_lazy;
  z.row.assign(m_nx, k_empty);
  z.pair = std::make_unique<std::atomic<uint8_t>[]>(m_nx);  // all k_empty
  m_pair = z.pair.get();
  z.by.resize(m_ny);
  for (size_t j = 0; j < m_ny; ++j) z.by[j] = m_grid.bracket_y(point<k_y_bits>(j));
  z.ln_rows.reserve(m_grid.rows() * m_ny);
  for (size_t r = 0; r < m_grid.rows(); ++r)
    for (size_t j = 0; j < m_ny; ++j) z.ln_rows.push_back(m_grid.ln_row(r, z.by[j]));
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

size_t BinnedGrid::rows_filled() const {
  const std::lock_guard<std::mutex> lock(m_lazy->fill);
  size_t n = 0;
  for (const uint8_t r : m_lazy->row) n += r != k_empty ? 1 : 0;
  return n;
}

double BinnedGrid::beyond(double x, double y) const { return m_grid.at(x, y); }

}  // namespace servesim
