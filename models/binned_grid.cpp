#include "models/binned_grid.h"

#include <algorithm>
#include <cmath>

namespace servesim {

BinnedGrid::BinnedGrid(LogGrid grid, int x_octaves, int y_octaves)
    : m_grid(std::move(grid)),
      m_x_end(static_cast<double>(uint64_t{1} << x_octaves)),
      m_y_end(static_cast<double>(uint64_t{1} << y_octaves)),
      m_ny((static_cast<size_t>(y_octaves) << k_y_bits) + 1) {
  const size_t nx = (static_cast<size_t>(x_octaves) << k_x_bits) + 1;
  // m_grid.at(bx, by) at every point, its rows' values along y taken once for each of the
  // grid's rows rather than twice for every point.
  std::vector<LogBracket> by(m_ny);
  for (size_t j = 0; j < m_ny; ++j) by[j] = m_grid.bracket_y(point<k_y_bits>(j));
  std::vector<double> rows;
  rows.reserve(m_grid.rows() * m_ny);
  for (size_t r = 0; r < m_grid.rows(); ++r)
    for (size_t j = 0; j < m_ny; ++j) rows.push_back(m_grid.ln_row(r, by[j]));
  m_z.resize(nx * m_ny);
  for (size_t i = 0; i < nx; ++i) {
    const LogBracket bx = m_grid.bracket_x(point<k_x_bits>(i));
    const double* lo = &rows[bx.lo * m_ny];
    const double* hi = &rows[bx.hi * m_ny];
    for (size_t j = 0; j < m_ny; ++j) m_z[i * m_ny + j] = m_grid.at_rows(bx, lo[j], hi[j]);
  }
  m_finite = std::all_of(m_z.begin(), m_z.end(), [](double z) { return std::isfinite(z); });
  m_x_bins.resize(size_t{1} << x_octaves);
  for (size_t x = 0; x < m_x_bins.size(); ++x)
    m_x_bins[x] = bin<k_x_bits>(std::max(1.0, static_cast<double>(x)));
}

double BinnedGrid::beyond(double x, double y) const { return m_grid.at(x, y); }

}  // namespace servesim
