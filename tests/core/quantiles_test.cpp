// QuantileSketch's fast paths give the figures of the plain ones to the bit: add_all against one
// add() a value, the histogram bucket read from a double's bits against frexp, kept values in
// chunks (copied, sorted across chunk boundaries, on huge pages) against a sorted vector.
#include "core/quantiles.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/byte_io.h"
#include "core/random.h"

namespace t_core_quantiles_test {

using namespace servesim;

namespace {

/// Gap-like values: whole nanoseconds times 1e-9, with some repeats and some out of order.
std::vector<double> values(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (double& x : v)
    x = static_cast<double>(static_cast<int64_t>(7e6 * std::exp(0.8 * rng.normal()))) * 1e-9;
  return v;
}

/// Stored (value, count) pairs in turn, for add_repeated_each.
struct Pairs {
  const QuantileSketch::Repeat* at;
  QuantileSketch::Repeat operator()() { return *at++; }
};

/// The same sketch but for the sum, which is rounded in another order (within `sum_eps`).
void require_same(QuantileSketch& a, QuantileSketch& b, double sum_eps = 0) {
  REQUIRE(a.count() == b.count());
  REQUIRE(a.exact() == b.exact());
  if (sum_eps == 0)
    CHECK(a.mean() == b.mean());
  else
    CHECK(a.mean() == Approx(b.mean()).epsilon(sum_eps));
  CHECK(a.max() == b.max());
  for (double p : {0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0})
    CHECK(a.percentile(p) == b.percentile(p));
}

/// The bucket midpoint of the histogram as the sketch first computed it, through frexp.
double frexp_bucket_mid(double v) {
  int e = 0;
  const double f = std::frexp(v, &e);
  const auto sub = static_cast<double>(static_cast<size_t>((f - 0.5) * 2.0 * 1024.0));
  const double lo = std::ldexp(0.5 + sub / 2048.0, e);
  const double hi = std::ldexp(0.5 + (sub + 1) / 2048.0, e);
  return 0.5 * (lo + hi);
}

}  // namespace

TEST_CASE("quantiles: add_all gives one add a value's figures to the bit", "[core][quantiles]") {
  const std::vector<double> v = values(20000, 3);
  // Limits below, inside and above the run, so that a batch crosses into the histogram.
  for (size_t limit : {size_t{0}, size_t{1}, size_t{100}, size_t{4099}, size_t{1} << 21,
                       std::numeric_limits<size_t>::max()}) {
    QuantileSketch one(limit), all(limit);
    for (double x : v) one.add(x);
    Rng rng(limit % 1000);
    for (size_t i = 0; i < v.size();) {
      const size_t k = std::min(v.size() - i, static_cast<size_t>(rng.uniform01() * 700));
      all.add_all(std::span<const double>(v.data() + i, k));
      i += k;
    }
    require_same(one, all);
  }
}

TEST_CASE("quantiles: the histogram bucket read from the bits is frexp's", "[core][quantiles]") {
  // With no value kept, the median of {tiny, x, huge} is the midpoint of x's bucket.
  std::vector<double> xs = values(2000, 5);
  for (int e = -38; e <= 39; ++e) {
    xs.push_back(std::ldexp(1.0, e));
    xs.push_back(std::nextafter(std::ldexp(1.0, e), 0.0));
    xs.push_back(std::nextafter(std::ldexp(1.0, e), 1e300));
    xs.push_back(std::ldexp(1.0, e) * 1.3);
  }
  for (double x : xs) {
    QuantileSketch q(0);
    q.add(1e-30);
    q.add(x);
    q.add(1e30);
    REQUIRE(!q.exact());
    INFO("x = " << x);
    CHECK(q.percentile(50) == frexp_bucket_mid(x));
  }
}

TEST_CASE("quantiles: kept values in chunks sort across chunk boundaries and survive copies",
          "[core][quantiles]") {
  // 600,000 values: chunks of 256 doubling up to 2 MiB (the huge-page mapping), falling at the
  // end so that the order breaks only in the last chunks.
  std::vector<double> v = values(600000, 11);
  std::sort(v.begin(), v.begin() + 500000);
  QuantileSketch q;
  for (size_t i = 0; i < 300000; ++i) q.add(v[i]);
  QuantileSketch copy = q;  // mid-run: both go on
  QuantileSketch moved(std::move(copy));
  for (size_t i = 300000; i < v.size(); ++i) {
    q.add(v[i]);
    moved.add(v[i]);
  }
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  REQUIRE(q.exact());
  for (double p : {0.0, 10.0, 50.0, 83.3, 99.0, 100.0}) {
    const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double want = sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
    CHECK(q.percentile(p) == want);
    CHECK(moved.percentile(p) == want);
  }
  // Values added after a percentile was asked for are taken into the next one.
  q.add(0.0);
  CHECK(q.percentile(0) == 0.0);
  CHECK(q.count() == 600001);
}

TEST_CASE("quantiles: percentiles asked together are percentile's one by one, to the bit",
          "[core][quantiles]") {
  const std::vector<double> ps{50, 90, 99, 0, 100, 25, 99.9, 83.3};
  // Kept values in order, out of order (the ranks found by their bits), with ties and a zero;
  // values a negative, -0.0 or in runs (selected by comparison); past the limit (histogram).
  std::vector<std::vector<double>> sets{values(20000, 3), {5, 1, 4, 1, 3}, {0, 0, 1, 0, 2},
                                        {3, -1, 2, 5},    {1, -0.0, 0, 2}, {7}};
  std::vector<double> ordered = values(1000, 4);
  std::sort(ordered.begin(), ordered.end());
  sets.push_back(ordered);
  for (size_t limit : {size_t{1} << 20, size_t{100}}) {
    for (const std::vector<double>& v : sets) {
      QuantileSketch one(limit), together(limit);
      for (double x : v) {
        one.add(x);
        together.add(x);
      }
      std::vector<double> got(ps.size());
      together.percentiles(ps, got);
      for (size_t i = 0; i < ps.size(); ++i) {
        INFO("p" << ps[i] << " of " << v.size() << " values, limit " << limit);
        CHECK(std::bit_cast<uint64_t>(got[i]) == std::bit_cast<uint64_t>(one.percentile(ps[i])));
      }
    }
  }
  // Runs beside the kept values.
  QuantileSketch one, together;
  for (QuantileSketch* q : {&one, &together}) {
    q->add(3.0);
    q->add(1.0);
    q->add_repeated(2.0, 5);
  }
  std::vector<double> got(ps.size());
  together.percentiles(ps, got);
  for (size_t i = 0; i < ps.size(); ++i) CHECK(got[i] == one.percentile(ps[i]));
  // Empty: zeros.
  QuantileSketch empty;
  empty.percentiles(ps, got);
  CHECK(got == std::vector<double>(ps.size(), 0.0));
}

TEST_CASE("quantiles: a merge of parts gives one sketch's figures, exact or not",
          "[core][quantiles]") {
  // Parts exact and not, merged into a sketch that stays exact or has to give up: the count,
  // max, exactness and percentiles are those of one sketch fed every value; the sum is the
  // parts' sums added.
  for (const size_t limit : {size_t{5000}, size_t{1500}, size_t{700}}) {
    INFO("limit: " << limit);
    QuantileSketch whole(limit), merged(limit);
    double sums = 0;
    uint64_t x = 12345;
    for (const size_t n : {size_t{300}, size_t{0}, size_t{900}, size_t{1}, size_t{600}}) {
      QuantileSketch part(limit);
      for (size_t i = 0; i < n; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const double v = static_cast<double>(x >> 11) * 0x1p-53 * 3.0;
        part.add(v);
        whole.add(v);
      }
      part.prepare();
      sums += part.sum();
      merged.merge(part);
    }
    CHECK(merged.count() == whole.count());
    CHECK(merged.max() == whole.max());
    CHECK(merged.exact() == whole.exact());
    CHECK(merged.sum() == sums);
    for (const double p : {0.0, 1.0, 50.0, 90.0, 99.0, 100.0})
      CHECK(merged.percentile(p) == whole.percentile(p));
  }
}

TEST_CASE("quantiles: a value added many times at once is that value added one by one",
          "[core][quantiles]") {
  // add_repeated and add_repeated_each against add() the same number of times, with plain
  // values in between, out of order, across the exact limit; copied, moved and merged.
  const std::vector<double> v = values(3000, 17);
  for (size_t limit :
       {size_t{0}, size_t{1}, size_t{100}, size_t{4000}, size_t{20000}, size_t{1} << 21}) {
    INFO("limit " << limit);
    QuantileSketch one(limit), runs(limit), each(limit);
    Rng rng(limit % 977 + 1);
    std::vector<QuantileSketch::Repeat> batch;
    for (size_t i = 0; i < v.size(); ++i) {
      const auto n = static_cast<int64_t>(rng.uniform01() * 9);  // 0 to 8 times
      for (int64_t k = 0; k < n; ++k) one.add(v[i]);
      runs.add_repeated(v[i], n);
      batch.push_back({v[i], n});
      if (i % 7 == 0) {  // a plain value between the runs
        one.add(v[i] * 0.5);
        runs.add(v[i] * 0.5);
        each.add_repeated_each(batch.size(), Pairs{batch.data()});
        batch.clear();
        each.add(v[i] * 0.5);
      }
    }
    each.add_repeated_each(batch.size(), Pairs{batch.data()});
    CHECK(one.count() > 10000);
    require_same(one, runs, 1e-12);
    require_same(one, each, 1e-12);
    QuantileSketch copy = runs;
    require_same(one, copy, 1e-12);
    QuantileSketch moved(std::move(copy));
    require_same(one, moved, 1e-12);
    // Merged into a sketch with values of its own.
    QuantileSketch a(limit), b(limit);
    for (double x : {0.25, 0.5, 0.75}) {
      a.add(x);
      b.add(x);
    }
    a.merge(one);
    b.merge(runs);
    require_same(a, b, 1e-12);
  }
}

TEST_CASE("quantiles: expecting values past the limit gives the histogram they would",
          "[core][quantiles]") {
  // 300 values into a sketch of limit 250: told first (expect) or not, the same figures; told
  // of fewer than the limit leaves it exact.
  const std::vector<double> v = values(300, 23);
  QuantileSketch told(250), plain(250), few(250);
  told.add(v[0]);
  told.expect(299);
  CHECK_FALSE(told.exact());
  few.expect(250);
  CHECK(few.exact());
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) told.add_repeated(v[i], 1);
    plain.add(v[i]);
  }
  require_same(told, plain, 1e-12);
}

TEST_CASE("quantiles: values put straight into the histogram give add()'s figures",
          "[core][quantiles]") {
  // A caller's own loop over the buckets (histogram(), bucket_in_range, added_to_histogram,
  // as GapSketch's counted gaps) against add(): count, max and percentiles to the bit, the
  // least value included (p0), onto a sketch that had values of its own and onto an empty one.
  std::vector<double> v = values(5000, 29);
  v.push_back(0.0);  // raised to the floor's bucket, bucket 0
  for (const bool before : {true, false}) {
    QuantileSketch one(0), direct(0);
    if (before) {
      one.add(0.004);
      direct.add(0.004);
    } else {
      direct.expect(1);  // past the limit with no value yet
    }
    REQUIRE_FALSE(direct.exact());
    int64_t* const buckets = direct.histogram();
    double lo = v[0], hi = v[0];
    for (double x : v) {
      one.add(x);
      ++buckets[QuantileSketch::bucket_in_range(std::max(x, QuantileSketch::k_bucket_floor))];
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    direct.added_to_histogram(static_cast<int64_t>(v.size()), lo, hi);
    REQUIRE(one.count() == direct.count());
    CHECK(one.max() == direct.max());
    for (double p : {0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0})
      CHECK(one.percentile(p) == direct.percentile(p));
  }
  // The bucket without clamps is the clamped one from the floor to 2^40 (the top bucket's
  // edge), and the floor's bucket is every smaller value's: zero, the subnormals.
  const double least = QuantileSketch::k_bucket_floor;
  CHECK(least == std::ldexp(1.0, -40));
  const double top = std::ldexp(1.0, 40);
  for (double x :
       {least, std::nextafter(least, 1.0), 1e-12, 1e-9, 0.02, 1.0, 3e9, std::nextafter(top, 0.0)})
    CHECK(QuantileSketch::bucket_in_range(x) == QuantileSketch::bucket_of(x));
  for (double x : v)
    if (x >= least) CHECK(QuantileSketch::bucket_in_range(x) == QuantileSketch::bucket_of(x));
  CHECK(QuantileSketch::bucket_in_range(least) == 0);
  for (double x : {0.0, 5e-324, 1e-300, std::nextafter(least, 0.0)})
    CHECK(QuantileSketch::bucket_of(x) == 0);
  // The largest value below 2^40 is in the last bucket already: nothing below needs the clamp.
  CHECK(QuantileSketch::bucket_in_range(std::nextafter(top, 0.0)) ==
        QuantileSketch::bucket_of(1e300));
}

TEST_CASE("quantiles: runs' order statistics by hand", "[core][quantiles]") {
  // {1 x3, 2, 5 x2, 9}: sorted 1 1 1 2 5 5 9; p50 = the 4th = 2, p0 = 1, p100 = 9,
  // p75 at position 4.5: halfway between 5 and 5 = 5; p60 at 3.6: 2 + 0.6 * (5 - 2) = 3.8.
  QuantileSketch q(100);
  q.add_repeated(5, 2);
  q.add_repeated(1, 3);
  q.add(9);
  q.add_repeated(2, 1);
  q.add_repeated(7, 0);  // nothing
  CHECK(q.count() == 7);
  CHECK(q.exact());
  CHECK(q.percentile(50) == 2);
  CHECK(q.percentile(0) == 1);
  CHECK(q.percentile(100) == 9);
  CHECK(q.percentile(75) == 5);
  CHECK(q.percentile(60) == Approx(3.8));
  CHECK(q.max() == 9);
  CHECK(q.sum() == 24);
}

TEST_CASE("quantiles: a histogram's order statistics by hand, before and after a reuse",
          "[core][quantiles]") {
  // Limit 4, {1 x3, 3 x2}: histogram mode. The bucket of 1.0 is [1, 1 + 2^-10), midpoint
  // 1 + 2^-11; that of 3.0 is [3, 3 + 2^-9), midpoint past the max, so clamped to 3. p50 at
  // position 2 is the 3rd value (bucket of 1), p75 at 3 the 4th (bucket of 3), p25 at 1 the 2nd.
  const auto check = [](QuantileSketch& q) {
    CHECK_FALSE(q.exact());
    CHECK(q.percentile(50) == 1.00048828125);
    CHECK(q.percentile(25) == 1.00048828125);
    CHECK(q.percentile(75) == 3.0);
    CHECK(q.percentile(0) == 1.0);
    CHECK(q.percentile(100) == 3.0);
  };
  QuantileSketch q(4);
  for (const double v : {3.0, 1.0, 1.0, 3.0, 1.0}) q.add(v);
  check(q);
  // The buckets of a copy are written; a sketch assigned an empty one starts again from none.
  QuantileSketch copy(q);
  check(copy);
  QuantileSketch moved(std::move(copy));
  check(moved);
  moved = QuantileSketch(4);
  for (const double v : {1.0, 3.0, 1.0, 1.0, 3.0}) moved.add(v);
  check(moved);
}

TEST_CASE("quantiles: percentiles read from ranks put in place are the sorted array's",
          "[core][quantiles]") {
  // percentile() selects the two ranks it reads (core/order_stats.h) instead of sorting; the
  // ranks it has placed must be forgotten whenever the kept values change: a value added, a
  // sketch moved or assigned over, loaded, merged into, or sorted by prepare().
  const std::vector<double> v = values(5000, 29);
  const auto want = [](std::vector<double> kept, double p) {
    std::sort(kept.begin(), kept.end());
    const double pos = p / 100.0 * static_cast<double>(kept.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, kept.size() - 1);
    return kept[lo] + (pos - static_cast<double>(lo)) * (kept[hi] - kept[lo]);
  };
  const std::vector<double> order = {99.0, 1.0, 50.0, 100.0, 0.0, 90.0, 50.0, 25.0, 99.9, 75.0};
  QuantileSketch q;
  std::vector<double> kept;
  for (size_t i = 0; i < 3000; ++i) {
    q.add(v[i]);
    kept.push_back(v[i]);
  }
  for (double p : order) CHECK(q.percentile(p) == want(kept, p));
  // Added after ranks were placed: one value below all, one in the middle.
  q.add(0.0);
  kept.push_back(0.0);
  q.add(want(kept, 50.0));
  kept.push_back(want(kept, 50.0));
  for (double p : order) CHECK(q.percentile(p) == want(kept, p));
  // A copy and a move keep the figures; a sketch with ranks of its own moved over forgets them.
  QuantileSketch copy = q;
  for (double p : order) CHECK(copy.percentile(p) == want(kept, p));
  QuantileSketch other;
  const std::vector<double> other_kept = values(kept.size(), 31);
  for (double x : other_kept) other.add(x);
  CHECK(other.percentile(37.0) == want(other_kept, 37.0));  // places ranks at the same count
  other = std::move(copy);
  CHECK(other.percentile(37.0) == want(kept, 37.0));  // a rank `copy` had not placed
  for (double p : order) CHECK(other.percentile(p) == want(kept, p));
  // Merged into: the parts' values appended.
  QuantileSketch part;
  for (size_t i = 4000; i < 5000; ++i) {
    part.add(v[i]);
    kept.push_back(v[i]);
  }
  CHECK(part.percentile(50.0) == want(std::vector<double>(v.begin() + 4000, v.end()), 50.0));
  q.merge(part);
  for (double p : order) CHECK(q.percentile(p) == want(kept, p));
  // Saved and loaded into a sketch that had ranks placed at the same count, then moved from.
  std::string bytes;
  q.save(bytes);
  QuantileSketch loaded;
  std::vector<double> filler(v.begin(), v.begin() + static_cast<ptrdiff_t>(kept.size()));
  for (double x : filler) loaded.add(x);
  CHECK(loaded.percentile(63.0) == want(filler, 63.0));
  QuantileSketch taken(std::move(loaded));
  ByteReader in(bytes);
  loaded.load(in);
  CHECK(loaded.percentile(63.0) == want(kept, 63.0));  // a rank `q` had not placed
  for (double p : order) CHECK(loaded.percentile(p) == want(kept, p));
  // Loaded into a sketch moved from by assignment, which had placed ranks at the same count.
  QuantileSketch from;
  for (double x : filler) from.add(x);
  CHECK(from.percentile(81.0) == want(filler, 81.0));
  QuantileSketch to;
  to = std::move(from);
  ByteReader again(bytes);
  from.load(again);
  CHECK(from.percentile(81.0) == want(kept, 81.0));
  // prepare() sorts: the figures stay.
  q.prepare();
  for (double p : order) CHECK(q.percentile(p) == want(kept, p));
}

}  // namespace t_core_quantiles_test
