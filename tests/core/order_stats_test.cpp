// core/order_stats.h: RankSelector gives, for ranks asked for in any order, the values a full
// sort puts at those indexes, and leaves each selected rank in place for the next.
#include "core/order_stats.h"

#include <algorithm>
#include <catch2/catch.hpp>
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

}  // namespace t_core_order_stats_test
