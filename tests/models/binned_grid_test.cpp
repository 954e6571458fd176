// BinnedGrid (models/binned_grid.h): the operator model's attention tables against the LogGrid
// they tabulate. Power laws z = x^px y^py through a few measured points; a sweep of (batch,
// length) sizes must stay within the documented 0.5% of the grid, and hit it exactly at
// integers up to 16 and powers of two.
#include "models/binned_grid.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "models/operator_dense_curve.h"

namespace t_models_binned_grid_test {

using namespace servesim;

namespace {

LogGrid power_grid(double px, double py) {
  // Measured sizes far apart, and a kink: past 4096 the slope along y becomes min(2, 2 py).
  const std::vector<double> xs{1, 8, 64, 512, 4096}, ys{1, 16, 256, 4096, 65536, 1 << 20};
  std::vector<double> z;
  for (double x : xs)
    for (double y : ys)
      z.push_back(std::pow(x, px) * std::pow(std::min(y, 4096.0), py) *
                  std::pow(std::max(1.0, y / 4096), std::min(2.0, 2 * py) - py) * 1e-3);
  return LogGrid(xs, ys, z, 1.0);
}

/// Tables of power_grid(1, 2) and of a grid whose extrapolation along y overflows (its values at
/// x = 1: `low` at y = 1, 1e306 at y = 16), with y below 2^y_octaves.
std::vector<BinnedGrid> finite_and_overflowing(int y_octaves, double low) {
  const std::vector<double> xs{1, 8, 64}, lengths{1, 16};
  const LogGrid huge(xs, lengths, {low, 1e306, 1e305, 1e306, 1e305, 1e306}, 1.0);
  std::vector<BinnedGrid> grids;
  grids.emplace_back(power_grid(1, 2), 12, y_octaves);
  grids.emplace_back(huge, 12, y_octaves);
  return grids;
}

/// The largest relative error of the table against the grid over a sweep.
double sweep_error(const BinnedGrid& b) {
  double worst = 0;
  for (double x = 1; x < 4096; x = x < 40 ? x + 1 : std::ceil(x * 1.07))
    for (double y = 1; y < (1 << 20); y *= 1.0137) {
      const double want = b.grid().at(x, y);
      worst = std::max(worst, std::abs(b.at(x, y) / want - 1));
    }
  return worst;
}

}  // namespace

TEST_CASE("binned grid: within 0.5% of the log-log grid over a sweep of sizes", "[models]") {
  for (double px : {0.0, 0.5, 1.0, 2.0})
    for (double py : {0.0, 0.5, 1.0, 2.0}) {
      const BinnedGrid b(power_grid(px, py), 12, 20);
      INFO("px " << px << " py " << py);
      const double err = sweep_error(b);
      CHECK(err < 0.005);
      // Attention's own slopes (at most linear in the batch, at most quadratic in the length):
      // the tighter bound the header states.
      if (px <= 1) CHECK(err < 0.001);
    }
}

TEST_CASE("binned grid: exact at small integers and powers of two", "[models]") {
  const BinnedGrid b(power_grid(1, 2), 12, 20);
  for (double x : {1.0, 2.0, 3.0, 7.0, 13.0, 16.0, 1024.0})
    for (double y : {1.0, 5.0, 16.0, 64.0, 65536.0}) CHECK(b.at(x, y) == b.grid().at(x, y));
  CHECK(b.at_one(300) == b.at(1, 300));
  // Between points: 1.5 and 24 are not on the x axis's points (1, 2, ..., 16, 18, 20, ...) but
  // halfway, so the value is the mean of the neighbours (z is linear in x here).
  CHECK(b.at(17, 64) == Approx((b.at(16, 64) + b.at(18, 64)) / 2).epsilon(1e-12));
}

TEST_CASE("binned grid: sizes below 1 count as 1, beyond the table go to the grid", "[models]") {
  const BinnedGrid b(power_grid(1, 1), 4, 8);
  CHECK(b.at(0.5, 0.25) == b.at(1, 1));
  CHECK(b.at(16, 10) == b.grid().at(16, 10));    // x at the table's end
  CHECK(b.at(3, 256) == b.grid().at(3, 256));    // y at the table's end
  CHECK(b.at(3, 1000) == b.grid().at(3, 1000));  // beyond
}

TEST_CASE("binned grid: a length between two points is interpolated linearly in the table",
          "[models]") {
  // z = x y^2 / 1000 below y = 4096. Between 32 and 64 the y points are 2 apart, so 33 lies
  // halfway between 32 and 34: the table gives (32^2 + 34^2) / 2 / 1000 = 1.090, where the
  // log-log grid follows the power law, 33^2 / 1000 = 1.089. Within the table's 2^20 lengths
  // the table, not the grid, answers.
  const BinnedGrid b(power_grid(1, 2), 12, 20);
  CHECK(b.grid().at(1, 33) == Approx(1.089).epsilon(1e-9));
  CHECK(b.at_one(33) == Approx(1.090).epsilon(1e-9));
  CHECK(b.at(1, 33) == Approx(1.090).epsilon(1e-9));
  CHECK(b.at(3, 33) == Approx(3 * 1.090).epsilon(1e-9));
}

TEST_CASE("binned grid: at_batch is at() to the bit for every integer batch", "[models]") {
  // Every batch of the table and past it, at lengths below 1 (taken as 1), on points, between
  // them and past the table (the grid itself); the bits compared, NaN included.
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const std::vector<double> ys{0.25, 1, 1.5, 17, 300.7, 4096, 65537.3, 1 << 20, 3e6};
  // Finite everywhere; and a grid whose extrapolation overflows to infinity at long lengths, so
  // that at() gives NaN there (0 x (inf - inf) along x) even where the batch is a point.
  const std::vector<double> xs{1, 8, 64}, lengths{1, 16};
  const LogGrid huge(xs, lengths, {1e305, 1e306, 1e305, 1e306, 1e305, 1e306}, 1.0);
  std::vector<BinnedGrid> grids;  // (a BinnedGrid moves but does not copy)
  grids.emplace_back(power_grid(1, 2), 12, 20);
  grids.emplace_back(huge, 12, 20);
  for (size_t g = 0; g < grids.size(); ++g) {
    const BinnedGrid& b = grids[g];
    size_t nan = 0;
    for (int64_t x = 0; x < 5000; ++x)
      for (double y : ys) {
        INFO("grid " << g << " x " << x << " y " << y);
        const double want = b.at(static_cast<double>(x), y);
        CHECK(same(b.at_batch(x, y), want));
        nan += std::isnan(want) ? 1 : 0;
      }
    CHECK((nan > 0) == (g == 1));  // the second grid does reach the NaN case
  }
}

TEST_CASE("binned grid: the operator model's dense curves are at() to the bit", "[models]") {
  // LogCurve::at_counts walks the axis instead of searching it: every count below n, for curves
  // of one point, starting above 1, with a repeated slope, ending inside the range (so that the
  // last segment's extrapolation is taken) and the gemm-like power-of-two sizes.
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const std::vector<LogCurve> curves{
      LogCurve({1}, {0.5}, 1.0),
      LogCurve({4, 8}, {1, 3}, 1.0),
      LogCurve({2, 3, 5, 7, 11, 13, 2048}, {1, 1.2, 1.1, 2, 4, 4.5, 300}, 1.0),
      LogCurve({1, 2, 4, 8, 16, 32, 64, 128, 256, 257, 300},
               {1, 1, 1, 1, 1.1, 1.3, 2, 4, 8, 9, 9.5}, 1.0),
  };
  for (size_t c = 0; c < curves.size(); ++c) {
    const std::vector<double> got = curves[c].at_counts(5000);
    REQUIRE(got.size() == 5000);
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("curve " << c << " count " << i);
      CHECK(same(got[i], curves[c].at(std::max(1.0, static_cast<double>(i)))));
    }
  }
}

TEST_CASE("binned grid: rows are filled on first use, each as the whole table would be",
          "[models]") {
  // Every point of the table is the grid's own value there (at(bx, by) takes the same two steps
  // as the fill), to the bit; only the rows a lookup reads are filled: x in [4, 5) reads the
  // points 4 and 4.5 (rows 16 and 17 of the 8-a-octave axis), at_one rows 0 and 1.
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const BinnedGrid b(power_grid(0.5, 1.5), 12, 20);
  CHECK(b.rows_filled() == 0);
  (void)b.at(4.2, 300);
  CHECK(b.rows_filled() == 2);
  (void)b.at_batch(4, 17);
  CHECK(b.rows_filled() == 2);
  (void)b.at_one(5000);
  CHECK(b.rows_filled() == 4);
  for (size_t i = 0; i < (size_t{12} << BinnedGrid::k_x_bits); ++i)  // the last row too
    for (size_t j = 0; j < (size_t{20} << BinnedGrid::k_y_bits); ++j) {
      const double x = BinnedGrid::point<BinnedGrid::k_x_bits>(i);
      const double y = BinnedGrid::point<BinnedGrid::k_y_bits>(j);
      INFO("x " << x << " y " << y);
      CHECK(same(b.at(x, y), b.grid().at(x, y)));
    }
  CHECK(b.rows_filled() == (size_t{12} << BinnedGrid::k_x_bits) + 1);
}

TEST_CASE("binned grid: threads filling rows at once read what one thread reads", "[models]") {
  // Four threads sweep every batch at several lengths, each starting at another batch, on a
  // table none of whose rows is filled yet; each must see the bits of a table read alone.
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const std::vector<double> ys{1, 2.5, 33, 300.7, 4096, 70000.5};
  const BinnedGrid alone(power_grid(1, 2), 12, 20);
  std::vector<double> want;
  for (int64_t x = 0; x < 4096; ++x)
    for (double y : ys) want.push_back(alone.at_batch(x, y));
  const BinnedGrid shared(power_grid(1, 2), 12, 20);
  std::vector<size_t> wrong(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int64_t k = 0; k < 4096; ++k) {
        const int64_t x = (k + static_cast<int64_t>(t) * 1024) % 4096;
        for (size_t i = 0; i < ys.size(); ++i)
          if (!same(shared.at_batch(x, ys[i]), want[static_cast<size_t>(x) * ys.size() + i]))
            ++wrong[t];
      }
    });
  for (std::thread& th : threads) th.join();
  for (size_t t = 0; t < 4; ++t) CHECK(wrong[t] == 0);
}

TEST_CASE("binned grid: a batch's rows asked for, filled, then read without filling", "[models]") {
  // The operator model's decode stretch asks batch_row_filled, fills with fill_batch_row where
  // needed, then reads filled_batch_row: the same bits as at_batch, on points (one row read)
  // and between them (each x in a bin of its own), for a finite grid and one whose
  // extrapolation overflows.
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  for (const BinnedGrid& b : finite_and_overflowing(20, 1e305))
    for (const size_t x : {size_t{1}, size_t{7}, size_t{16}, size_t{19}, size_t{300}}) {
      INFO("x " << x);
      CHECK_FALSE(b.batch_row_filled(x));
      b.fill_batch_row(x);
      CHECK(b.batch_row_filled(x));
      const BinnedGrid::BatchRow row = b.filled_batch_row(x);
      for (const double y : {1.0, 2.5, 33.0, 300.7, 65537.3})
        CHECK(same(row.at(y), b.at_batch(static_cast<int64_t>(x), y)));
    }
}

TEST_CASE("binned grid: at_one_counts is at_one at every length to the bit", "[models]") {
  // The walk over each sub-bin's integers must give at_one's bits at every length, on the
  // small lengths (sub-bins narrower than 1), across octaves, up to the table's end; for a
  // finite grid and one whose values overflow (inf - inf: NaN where at_one has it too).
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  std::vector<BinnedGrid> grids = finite_and_overflowing(15, 1e300);
  grids.emplace_back(power_grid(0.5, 0.5), 12, 15);
  for (size_t g = 0; g < grids.size(); ++g) {
    const BinnedGrid& b = grids[g];
    for (const size_t n :
         {size_t{0}, size_t{1}, size_t{7}, size_t{16}, size_t{17}, size_t{1000}, size_t{1} << 15}) {
      const std::vector<double> got = b.at_one_counts(n);
      REQUIRE(got.size() == n);
      size_t wrong = 0, nan = 0;
      for (size_t y = 0; y < n; ++y) {
        const double want = b.at_one(static_cast<double>(y));
        wrong += same(got[y], want) ? 0 : 1;
        nan += std::isnan(want) ? 1 : 0;
      }
      INFO("grid " << g << " n " << n);
      CHECK(wrong == 0);
      if (g == 1 && n == (size_t{1} << 15)) CHECK(nan > 0);  // the NaN case is reached
    }
  }
}

TEST_CASE("binned grid: a dense curve's entries are the curve's, each filled on its read",
          "[models]") {
  // DenseCurve (models/operator_dense_curve.h): every count below n reads LogCurve::at(max(1,
  // i)) to the bit, read twice (filled, then kept) and in any order; an entry is 0 until read.
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const LogCurve curve({1, 2, 4, 8, 16, 32, 64, 128, 256, 257, 300},
                       {1, 1, 1, 1, 1.1, 1.3, 2, 4, 8, 9, 9.5}, 1.0);
  const DenseCurve d(curve, 5000);
  CHECK(d.size() == 5000);
  CHECK(d.peek(4321) == 0);
  CHECK(same(d.at(4321), curve.at(4321)));
  CHECK(same(d.peek(4321), curve.at(4321)));
  CHECK(d.peek(4320) == 0);
  size_t wrong = 0;
  for (size_t pass = 0; pass < 2; ++pass)
    for (size_t i = 5000; i-- > 0;)
      wrong += same(d.at(i), curve.at(std::max(1.0, static_cast<double>(i)))) ? 0 : 1;
  CHECK(wrong == 0);
}

TEST_CASE("binned grid: threads reading a dense curve at once read what one thread reads",
          "[models]") {
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const LogCurve curve({2, 3, 5, 7, 11, 13, 2048}, {1, 1.2, 1.1, 2, 4, 4.5, 300}, 1.0);
  const DenseCurve shared(curve, 8192);
  std::vector<size_t> wrong(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t k = 0; k < 8192; ++k) {
        const size_t i = (k + t * 2048) % 8192;
        if (!same(shared.at(i), curve.at(std::max(1.0, static_cast<double>(i))))) ++wrong[t];
      }
    });
  for (std::thread& th : threads) th.join();
  for (size_t t = 0; t < 4; ++t) CHECK(wrong[t] == 0);
}

}  // namespace t_models_binned_grid_test
