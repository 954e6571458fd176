#pragma once
// A LogGrid (models/log_interp.h) tabulated for fast lookups, for the operator step model's
// attention terms (docs/config.md, "kind: operator"): a step looks a value up with integer bit
// operations and one bilinear interpolation instead of binary searches, logs and an exp.
//
// Each axis is cut into octaves [2^e, 2^(e+1)) and each octave into equal sub-bins: 8 along x
// (the batch: attention grows at most linearly with it), 16 along y (the length), the points
// 2^e (1 + j / 8) and 2^e (1 + j / 16). A size's sub-bin and its fraction in it are read from
// the bits of its double (the exponent, then the top bits and the rest of the mantissa), so
// every integer up to 16 and every power of two is a point, where the table holds the LogGrid's
// value exactly. Between points the value is interpolated linearly in both sizes. A sub-bin
// spans a factor of at most 9/8 (x) or 17/16 (y), so for a power law x^p the linear
// interpolation's relative error is at most about |p (p - 1)| ln(9/8)^2 / 8 ~ 0.17% |p (p - 1)|
// along x and 0.046% |p (p - 1)| along y: < 0.1% for 0 <= p <= 1 along x and p <= 2 along y,
// < 0.5% for slopes up to 2 on both (tests/models/binned_grid_test.cpp sweeps it). Sizes at or
// beyond the table's last octave go to the LogGrid itself.
//
// The table's rows (one a point along x) are computed on their first use, each exactly as a
// fill of the whole table computes it: a run reads few of them (the operator model's context
// grid a handful of its 97 rows; its generation grid those up to the largest batch), and each
// costs 321 exp calls. Lookups from several threads at once are safe: a row is filled under a
// lock and published by an atomic flag, which a lookup reads (one load) before the row.
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "models/log_interp.h"

namespace servesim {

class BinnedGrid {
 public:
  static constexpr int k_x_bits = 3, k_y_bits = 4;  // log2 of the sub-bins per octave

  /// Tabulates `grid` for x < 2^x_octaves and y < 2^y_octaves (sizes below 1 count as 1).
  /// REQUIRES: x_octaves >= 1.
  BinnedGrid(LogGrid grid, int x_octaves, int y_octaves);

  [[nodiscard]] double at(double x, double y) const {
    x = x < 1 ? 1 : x;
    y = y < 1 ? 1 : y;
    if (!(x < m_x_end && y < m_y_end)) return beyond(x, y);
    const Bin bx = bin<k_x_bits>(x), by = bin<k_y_bits>(y);
    (void)rows_at(bx.index);
    const double* r0 = &m_z[bx.index * m_ny + by.index];
    const double* r1 = r0 + m_ny;
    const double a = r0[0] + by.frac * (r0[1] - r0[0]);
    const double b = r1[0] + by.frac * (r1[1] - r1[0]);
    return a + bx.frac * (b - a);
  }
  /// The table at one integer x (a batch) for any y in [1, y_end()): x's sub-bin and row
  /// looked up once, for a caller that reads many lengths at the same batch (the operator
  /// model's decode stretch, models/decode_stretch.h). at(y) is at_batch(x, y) to the bit.
  struct BatchRow {
    const double* row = nullptr;  // the table's row at or below x
    size_t ny = 0;                // its length (the next row follows it)
    double frac = 0;              // x's fraction of the way to the next row
    bool one_row = false;         // x is a point and both rows finite: the next row is not read
    /// REQUIRES: 1 <= y < y_end().
    [[nodiscard, gnu::always_inline]] double at(double y) const {
      const Bin by = bin<k_y_bits>(y);
      const double* r0 = row + by.index;
      const double a = r0[0] + by.frac * (r0[1] - r0[0]);
      // Where x is a point (every x up to 16) the row above is not read: the interpolation
      // along x would add 0 times a finite difference.
      if (one_row) return a;
      const double* r1 = r0 + ny;
      const double b = r1[0] + by.frac * (r1[1] - r1[0]);
      return a + frac * (b - a);
    }
  };
  /// The batches batch_row covers: 0 <= x < batches().
  [[nodiscard]] size_t batches() const { return m_x_bins.size(); }
  /// The lengths BatchRow::at covers lie below this.
  [[nodiscard]] double y_end() const { return m_y_end; }
  /// Whether batch_row(x) would find its rows filled (a caller that keeps its fast path free of
  /// calls asks first, and fills them with fill_batch_row otherwise). REQUIRES: x < batches().
  [[nodiscard, gnu::always_inline]] bool batch_row_filled(size_t x) const {
    return m_pair[m_x_bins[x].index].load(std::memory_order_acquire) != k_empty;
  }
  /// Fills the rows batch_row(x) reads. REQUIRES: x < batches().
  void fill_batch_row(size_t x) const { (void)fill_rows(m_x_bins[x].index); }
  /// REQUIRES: 0 <= x < batches().
  [[nodiscard, gnu::always_inline]] BatchRow batch_row(size_t x) const {
    const Bin bx = m_x_bins[x];
    const bool finite = rows_at(bx.index);
    return {&m_z[bx.index * m_ny], m_ny, bx.frac, bx.frac == 0 && finite};
  }
  /// batch_row(x) without the filling. REQUIRES: batch_row_filled(x).
  [[nodiscard, gnu::always_inline]] BatchRow filled_batch_row(size_t x) const {
    const Bin bx = m_x_bins[x];
    const bool finite = m_pair[bx.index].load(std::memory_order_acquire) == k_finite;
    return {&m_z[bx.index * m_ny], m_ny, bx.frac, bx.frac == 0 && finite};
  }
  /// at(x, y) for an integer x (a batch), to the bit: x's sub-bin comes from a table (and where
  /// x is a point the row above is not read, BatchRow).
  [[nodiscard, gnu::always_inline]] double at_batch(int64_t x, double y) const {
    if (!(static_cast<uint64_t>(x) < m_x_bins.size() && y < m_y_end))
      return at(static_cast<double>(x), y);
    return batch_row(static_cast<size_t>(x)).at(y < 1 ? 1 : y);
  }
  /// at(1, y), which skips the interpolation along x.
  [[nodiscard]] double at_one(double y) const {
    y = y < 1 ? 1 : y;
    if (!(y < m_y_end)) return beyond(1, y);
    const Bin by = bin<k_y_bits>(y);
    (void)rows_at(0);
    const double* r0 = &m_z[by.index];
    return r0[0] + by.frac * (r0[1] - r0[0]);
  }
  /// at_one(y) for y = 0, 1, ..., n - 1, to the bit (REQUIRES: n <= y_end()): each sub-bin's
  /// integers are walked with the fractions bin() gives them (k / w for the k-th of a sub-bin
  /// of w integers, exact in both), instead of binning each length.
  [[nodiscard]] std::vector<double> at_one_counts(size_t n) const;
  /// The grid itself (for sizes beyond the table, and for tests).
  [[nodiscard]] const LogGrid& grid() const { return m_grid; }
  /// Bytes the table takes once every row is filled.
  [[nodiscard]] size_t table_bytes() const { return m_nx * m_ny * sizeof(double); }
  /// How many of the table's rows have been filled (for tests).
  [[nodiscard]] size_t rows_filled() const;

  /// The size of point i of an axis of 2^bits sub-bins an octave: 2^(i / s) (1 + (i % s) / s).
  template <int bits>
  [[nodiscard]] static double point(size_t i) {
    constexpr size_t s = size_t{1} << bits;
    return static_cast<double>(uint64_t{1} << (i / s)) *
           (1.0 + static_cast<double>(i % s) / static_cast<double>(s));
  }

 private:
  struct Bin {
    size_t index;  // the point at or below
    double frac;   // the fraction of the way to the next point
  };
  /// The grid itself, out of line so that at() stays small.
  [[nodiscard]] double beyond(double x, double y) const;
  /// The state of a pair of rows (i, i + 1), which a lookup between them reads: not both filled
  /// yet, both filled with finite values only, or both filled and not all finite.
  enum : uint8_t { k_empty = 0, k_finite = 1, k_other = 2 };
  /// Rows i and i + 1 filled (REQUIRES: i + 1 < the row count); whether both are finite.
  [[nodiscard, gnu::always_inline]] bool rows_at(size_t i) const {
    uint8_t s = m_pair[i].load(std::memory_order_acquire);
    if (s == k_empty) [[unlikely]]
      s = fill_rows(i);
    return s == k_finite;
  }
  /// rows_at's filling, out of line: fills rows i and i + 1 where not yet filled and returns
  /// the pair's state.
  [[gnu::noinline]] uint8_t fill_rows(size_t i) const;
  /// REQUIRES: 1 <= v < 2^63.
  template <int sub_bits>
  [[nodiscard]] static Bin bin(double v) {
    constexpr int k_rest = 52 - sub_bits;
    const auto bits = std::bit_cast<uint64_t>(v);
    const uint64_t e = (bits >> 52) - 1023;
    const uint64_t sub = (bits >> k_rest) & ((uint64_t{1} << sub_bits) - 1);
    const uint64_t rest = bits & ((uint64_t{1} << k_rest) - 1);
    return {static_cast<size_t>((e << sub_bits) + sub),
            static_cast<double>(rest) * (1.0 / static_cast<double>(uint64_t{1} << k_rest))};
  }

  /// What filling a row reads, and the rows' states (apart, so that the grid can move).
  struct Lazy {
    std::mutex fill;           // held while rows are filled
    std::vector<uint8_t> row;  // [i]: row i's own state (read and written under `fill`)
    std::unique_ptr<std::atomic<uint8_t>[]> pair;  // [i]: rows i and i + 1 (m_pair)
    std::vector<LogBracket> by;                    // [j]: the grid's bracket of point(j) along y
    std::vector<double> ln_rows;       // [r * m_ny + j]: the grid's row r at by[j], once done
    std::vector<uint8_t> ln_row_done;  // [r]: ln_rows' row r computed (under `fill`)
  };

  LogGrid m_grid;
  double m_x_end, m_y_end;
  size_t m_nx, m_ny;
  // m_z[i * m_ny + j] = the grid at (point(i), point(j)), row i once filled (left
  // uninitialised until then, so that the pages of rows never read are never touched).
  std::unique_ptr<double[]> m_z;
  std::vector<Bin> m_x_bins;  // [x]: bin<k_x_bits>(max(1, x)) for every integer x < m_x_end
  std::unique_ptr<Lazy> m_lazy;
  std::atomic<uint8_t>* m_pair = nullptr;  // m_lazy->pair, one load nearer for the lookups
};

}  // namespace servesim
