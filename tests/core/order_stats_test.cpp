// core/order_stats.h: RankSelector gives, for ranks asked for in any order, the values a full
// sort puts at those indexes, and leaves each selected rank in place for the next;
// select_ranks_by_bits gives a sort's values for several ranks at once without reordering, and
// refuses values whose bits do not order them.
#include "core/order_stats.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace t_core_order_stats_test {

using namespace servesim;

TEST_CASE("order stats: a small array worked out by hand", "[core]") {
  std::vector<double> v{5, 1, 4, 1, 3};  // sorted: 1 1 3 4 5
  RankSelector s(v.data(), v.size());
  CHECK(s.at(4) == 5);
  CHECK(s.at(0) == 1);
  CHECK(s.at(2) == 3);
  CHECK(s.at(1) == 1);
  CHECK(s.at(3) == 4);
  CHECK(s.at(2) == 3);  // asked again: already in place
  CHECK(s.placed() == std::vector<size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("order stats: percentile ranks in any order match a full sort", "[core]") {
  std::mt19937_64 rng(34);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 3000;
    std::vector<double> v(n);
    // Few distinct values in some trials (many ties), continuous ones in others.
    const uint64_t distinct = trial % 2 == 0 ? 1 + rng() % 20 : uint64_t{1} << 40;
    for (double& x : v) x = static_cast<double>(rng() % distinct) * 0.001;
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    std::vector<size_t> ranks;
    for (const double p : {50.0, 90.0, 99.0, 99.9, 0.0, 100.0, 25.0}) {
      const size_t lo = static_cast<size_t>(p / 100.0 * static_cast<double>(n - 1));
      ranks.push_back(lo);
      ranks.push_back(std::min(lo + 1, n - 1));
    }
    std::shuffle(ranks.begin(), ranks.end(), rng);
    RankSelector s(v.data(), n);
    for (const size_t k : ranks) REQUIRE(s.at(k) == sorted[k]);
    for (const size_t k : s.placed()) CHECK(v[k] == sorted[k]);
    std::sort(v.begin(), v.end());
    CHECK(v == sorted);  // selection only reorders
  }
}

TEST_CASE("order stats: select_rank keeps its ranks in the caller's vector", "[core]") {
  // A holder's three percentile calls, each with a fresh call but the same `placed`.
  std::vector<double> v{9, 2, 7, 2, 5, 8, 1, 6};  // sorted: 1 2 2 5 6 7 8 9
  std::vector<size_t> placed;
  CHECK(select_rank(v.data(), v.size(), 3, placed) == 5);
  CHECK(select_rank(v.data(), v.size(), 4, placed) == 6);
  CHECK(select_rank(v.data(), v.size(), 7, placed) == 9);
  CHECK(select_rank(v.data(), v.size(), 1, placed) == 2);
  CHECK(select_rank(v.data(), v.size(), 2, placed) == 2);
  CHECK(placed == std::vector<size_t>{1, 2, 3, 4, 7});
  CHECK(select_rank(v.data(), v.size(), 4, placed) == 6);  // in place: read, not selected
  CHECK(placed.size() == 5);
}

TEST_CASE("order stats: several ranks by the values' bits match a full sort", "[core]") {
  std::mt19937_64 rng(49);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 1 + rng() % 5000;
    std::vector<double> v(n);
    // Many ties, continuous values over many binades, zeros, or values a few ulps apart.
    const int shape = trial % 4;
    for (double& x : v) {
      if (shape == 0) x = static_cast<double>(rng() % 7) * 0.25;
      if (shape == 1)
        x = std::ldexp(1.0 + static_cast<double>(rng() % 1000) / 1000,
                       -30 + static_cast<int>(rng() % 60));
      if (shape == 2) x = rng() % 3 == 0 ? 0.0 : static_cast<double>(rng() % 100000) * 1e-6;
      if (shape == 3) x = std::nextafter(1.0, 2.0 + static_cast<double>(rng() % 5));
    }
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    std::vector<size_t> ks;
    for (int i = 0; i < 9; ++i) ks.push_back(rng() % n);
    ks.push_back(0);
    ks.push_back(n - 1);
    const std::vector<double> before = v;
    std::vector<double> out(ks.size());
    REQUIRE(select_ranks_by_bits(v.data(), n, sorted.front(), sorted.back(), ks, out));
    for (size_t i = 0; i < ks.size(); ++i) REQUIRE(out[i] == sorted[ks[i]]);
    CHECK(v == before);  // read, not reordered
  }
}

TEST_CASE("order stats: ranks by bits refuse values whose bits do not order them", "[core]") {
  const std::vector<size_t> ks{0, 1};
  std::vector<double> out(2);
  std::vector<double> v{1.0, 2.0, -1.0};
  CHECK_FALSE(select_ranks_by_bits(v.data(), 3, -1.0, 2.0, ks, out));  // a negative least
  v = {1.0, -0.0, 2.0};
  CHECK_FALSE(select_ranks_by_bits(v.data(), 3, 0.0, 2.0, ks, out));  // -0.0 among them
  v = {1.0, std::numeric_limits<double>::quiet_NaN(), 2.0};
  CHECK_FALSE(select_ranks_by_bits(v.data(), 3, 1.0, 2.0, ks, out));
  v = {1.0, 3.0, 2.0};  // a value past the greatest given
  CHECK_FALSE(select_ranks_by_bits(v.data(), 3, 1.0, 2.0, ks, out));
  v = {1.0, 1.0, 2.0};
  CHECK(select_ranks_by_bits(v.data(), 3, 1.0, 2.0, ks, out));
  CHECK(out == std::vector<double>{1.0, 1.0});
}

}  // namespace t_core_order_stats_test
