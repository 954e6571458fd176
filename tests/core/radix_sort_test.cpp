// core/radix_sort.h: the order std::stable_sort gives by the same key, for arrays whose keys
// differ in every digit, agree on some (the passes it skips) or all, and of every short length;
// and QuantileSketch's percentiles over many runs (sorted by it) match those of the same values
// added one by one.
#include "core/radix_sort.h"

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "core/quantiles.h"

namespace t_core_radix_sort_test {

using namespace servesim;

struct Item {
  uint64_t key;
  uint32_t order;  // its place before sorting: shows the sort is stable
  bool operator==(const Item&) const = default;
};

std::vector<Item> stable_sorted(std::vector<Item> v) {
  std::stable_sort(v.begin(), v.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  return v;
}

void check_sorts(std::vector<Item> v) {
  const std::vector<Item> want = stable_sorted(v);
  std::vector<Item> scratch;
  radix_sort(v, scratch, [](const Item& i) { return i.key; });
  CHECK(v == want);
}

TEST_CASE("radix sort: random keys of every width, duplicates and short arrays", "[core]") {
  std::mt19937_64 rng(48);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = trial < 40 ? static_cast<size_t>(trial) : 1 + rng() % 5000;
    // Keys drawn from a few bits (many duplicates, most digits shared) up to all 64.
    const int bits = 1 + static_cast<int>(rng() % 64);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint64_t high = rng() & ~mask;  // bits every key shares: passes to skip
    std::vector<Item> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = {high | (rng() & mask), static_cast<uint32_t>(i)};
    check_sorts(v);
  }
}

TEST_CASE("radix sort: all keys equal, already sorted and reversed", "[core]") {
  std::vector<Item> same(3000), up(3000), down(3000);
  for (uint32_t i = 0; i < 3000; ++i) {
    same[i] = {7, i};
    up[i] = {uint64_t{i} << 40 | i, i};
    down[i] = {~uint64_t{0} - i, i};
  }
  check_sorts(same);
  check_sorts(up);
  check_sorts(down);
}

TEST_CASE("radix sort: positive doubles by their bits sort as the doubles do", "[core]") {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> gap(200.0);
  std::vector<double> v(20000);
  for (double& x : v) x = gap(rng);
  v[0] = 0.0;
  v[1] = -0.0;  // + 0.0 makes it +0.0
  v[2] = 1e300;
  v[3] = 5e-324;
  std::vector<double> scratch, want = v;
  radix_sort(v, scratch, [](double x) { return std::bit_cast<uint64_t>(x + 0.0); });
  std::sort(want.begin(), want.end());
  REQUIRE(v.size() == want.size());
  for (size_t i = 0; i < v.size(); ++i) CHECK(v[i] == want[i]);
}

TEST_CASE("radix sort: a sketch's percentiles over thousands of runs match plain adds", "[core]") {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> ns(1000, 90000);
  QuantileSketch runs, plain;
  for (int i = 0; i < 6000; ++i) {  // past the length at which the runs are radix-sorted
    const double v = ns(rng) * 1e-6;
    const auto count = static_cast<int64_t>(1 + rng() % 5);
    runs.add_repeated(v, count);
    for (int64_t k = 0; k < count; ++k) plain.add(v);
  }
  REQUIRE(runs.count() == plain.count());
  for (double p : {0.0, 1.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0})
    CHECK(runs.percentile(p) == plain.percentile(p));
}

}  // namespace t_core_radix_sort_test
