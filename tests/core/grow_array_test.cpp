// core/grow_array.h: a realloc-grown array keeps its values, in order, through growth past
// malloc's mmap threshold, erasing from the front, copies and moves.
#include "core/grow_array.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

namespace t_core_grow_array_test {

using namespace servesim;

TEST_CASE("grow array: values pushed past the mmap threshold stay, in order", "[core]") {
  // 300,000 int64 values: 2.4 MB, grown by doubling from 16 (blocks moved by mremap past the
  // 128 KiB threshold); every value checked against a vector given the same pushes.
  GrowArray<int64_t> a;
  std::vector<int64_t> want;
  CHECK(a.empty());
  CHECK(a.data() == nullptr);
  for (int64_t i = 0; i < 300000; ++i) {
    const int64_t v = i * 7919 % 1000003;
    a.push_back(v);
    want.push_back(v);
  }
  REQUIRE(a.size() == want.size());
  CHECK(a.capacity() >= a.size());
  CHECK(std::vector<int64_t>(a.begin(), a.end()) == want);
  CHECK(a.back() == want.back());
  CHECK(a[12345] == want[12345]);
}

TEST_CASE("grow array: resize fills, erase_front keeps the tail in order", "[core]") {
  GrowArray<int32_t> d;
  d.resize(5, 3);
  CHECK(std::vector<int32_t>(d.begin(), d.end()) == std::vector<int32_t>{3, 3, 3, 3, 3});
  d[1] = 1;
  d[4] = 4;
  d.resize(7);  // the new ones value-initialised
  CHECK(std::vector<int32_t>(d.begin(), d.end()) == std::vector<int32_t>{3, 1, 3, 3, 4, 0, 0});
  d.erase_front(0);
  CHECK(d.size() == 7);
  d.erase_front(4);
  CHECK(std::vector<int32_t>(d.begin(), d.end()) == std::vector<int32_t>{4, 0, 0});
  d.resize(2);
  CHECK(std::vector<int32_t>(d.begin(), d.end()) == std::vector<int32_t>{4, 0});
  d.erase_front(2);
  CHECK(d.empty());
  d.push_back(9);  // room kept after erasing
  CHECK(d.size() == 1);
  CHECK(d.back() == 9);
}

TEST_CASE("grow array: copies are independent, moves leave the source empty", "[core]") {
  GrowArray<int64_t> a;
  for (int64_t i = 0; i < 100; ++i) a.push_back(i);
  GrowArray<int64_t> b = a;
  b[0] = -1;
  CHECK(a[0] == 0);
  CHECK(b.size() == 100);
  CHECK(b[99] == 99);
  GrowArray<int64_t> c = std::move(b);
  CHECK(b.empty());
  CHECK(b.capacity() == 0);
  CHECK(c[0] == -1);
  CHECK(c.size() == 100);
  GrowArray<int64_t> d;
  d.push_back(5);
  d = std::move(c);
  CHECK(d.size() == 100);
  CHECK(c.empty());
  d = a;  // copy-assign over values of its own
  CHECK(d[0] == 0);
  CHECK(d.size() == 100);
  const GrowArray<int64_t>& same = d;
  d = same;  // assigned itself: keeps them
  CHECK(d[50] == 50);
  b.push_back(7);  // a moved-from array is usable
  CHECK(b.size() == 1);
  CHECK(b[0] == 7);
}

}  // namespace t_core_grow_array_test
