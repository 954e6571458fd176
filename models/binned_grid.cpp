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
  z.state = std::make_unique<std::atomic<uint8_t>[]>(m_nx);  // all k_empty
  z.by.resize(m_ny);
  for (size_t j = 0; j < m_ny; ++j) z.by[j] = m_grid.bracket_y(point<k_y_bits>(j));
  z.ln_rows.reserve(m_grid.rows() * m_ny);
  for (size_t r = 0; r < m_grid.rows(); ++r)
    for (size_t j = 0; j < m_ny; ++j) z.ln_rows.push_back(m_grid.ln_row(r, z.by[j]));
  m_x_bins.resize(size_t{1} << x_octaves);
  for (size_t x = 0; x < m_x_bins.size(); ++x)
    m_x_bins[x] = bin<k_x_bits>(std::max(1.0, static_cast<double>(x)));
}

bool BinnedGrid::fill_rows(size_t i) const {
  Lazy& z = *m_lazy;
  const std::lock_guard<std::mutex> lock(z.fill);
  bool finite = true;
  for (size_t row = i; row <= i + 1; ++row) {
    uint8_t s = z.state[row].load(std::memory_order_relaxed);  // written under the lock only
    if (s == k_empty) {
      const LogBracket bx = m_grid.bracket_x(point<k_x_bits>(row));
      const double* lo = &z.ln_rows[bx.lo * m_ny];
      const double* hi = &z.ln_rows[bx.hi * m_ny];
      double* out = &m_z[row * m_ny];
      bool all = true;
      for (size_t j = 0; j < m_ny; ++j) {
        out[j] = m_grid.at_rows(bx, lo[j], hi[j]);
        all = all && std::isfinite(out[j]);
      }
      s = all ? k_finite : k_other;
      z.state[row].store(s, std::memory_order_release);
    }
    finite = finite && s == k_finite;
  }
  return finite;
}

size_t BinnedGrid::rows_filled() const {
  size_t n = 0;
  for (size_t i = 0; i < m_nx; ++i)
    n += m_lazy->state[i].load(std::memory_order_acquire) != k_empty ? 1 : 0;
  return n;
}

double BinnedGrid::beyond(double x, double y) const { return m_grid.at(x, y); }

}  // namespace servesim
