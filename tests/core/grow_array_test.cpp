// core/grow_array.h: a growing array keeps its values, in order, through growth past
// malloc's mmap threshold and past its own huge-page threshold (a block it maps), erasing from
// the front, copies and moves; resize's new values are the given ones, also where a mapped
// block skips writing zeros.
#include "core/grow_array.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
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

TEST_CASE("grow array: a mapped block's new values are zero wherever values were kept before",
          "[core]") {
  // int32: 1 MiB is 262,144 values. Every resize(n, 0) must read back zeros past the old size,
  // whether those places held values before (erased, shrunk, copied over) or are fresh pages.
  constexpr size_t k_big = GrowArray<int32_t>::k_huge_bytes / sizeof(int32_t);
  GrowArray<int32_t> d;
  d.resize(k_big + 10, 0);
  REQUIRE(d.size() == k_big + 10);
  CHECK(reinterpret_cast<uintptr_t>(d.data()) % (size_t{2} << 20) == 0);  // mapped, aligned
  size_t nonzero = 0;
  for (int32_t v : d) nonzero += v != 0;
  CHECK(nonzero == 0);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<int32_t>(i % 1000) + 1;
  d.erase_front(5);  // the last 5 places keep stale values past the size
  d.resize(d.size() + 5, 0);
  for (size_t i = d.size() - 5; i < d.size(); ++i) CHECK(d[i] == 0);
  CHECK(d[0] == 6);
  d.resize(100);  // shrunk: the values past 100 are stale
  d.resize(k_big + 10);
  nonzero = 0;
  for (size_t i = 100; i < d.size(); ++i) nonzero += d[i] != 0;
  CHECK(nonzero == 0);
  for (size_t i = 0; i < d.size(); ++i) d[i] = 7;
  // Grown past its block (moved to a larger one): kept values stay, new ones are zero.
  d.resize(5 * k_big, 0);
  CHECK(d[k_big + 9] == 7);
  CHECK(d[k_big + 10] == 0);
  CHECK(d[5 * k_big - 1] == 0);
  d.resize(5 * k_big + 3, -2);  // a value other than zero is written everywhere new
  CHECK(d[5 * k_big + 2] == -2);
  // Copied over by a shorter array: the places past its size held 7s.
  GrowArray<int32_t> small;
  small.resize(3, 4);
  d = small;
  REQUIRE(d.size() == 3);
  d.resize(k_big, 0);
  nonzero = 0;
  for (size_t i = 3; i < d.size(); ++i) nonzero += d[i] != 0;
  CHECK(nonzero == 0);
  CHECK(d[2] == 4);
  // Pushed one by one past the threshold (from malloc's block into a mapped one) and moved.
  GrowArray<int64_t> e;
  for (int64_t i = 0; i < 400000; ++i) e.push_back(i);
  GrowArray<int64_t> f = std::move(e);
  CHECK(f.size() == 400000);
  CHECK(f[399999] == 399999);
  // Copied over right after pushes (which do not note how far values were kept).
  GrowArray<int64_t> g;
  for (int64_t i = 0; i < 400000; ++i) g.push_back(i + 1);
  GrowArray<int64_t> three;
  three.resize(3, 5);
  g = three;
  g.resize(400000, 0);
  nonzero = 0;
  for (size_t i = 3; i < g.size(); ++i) nonzero += g[i] != 0;
  CHECK(nonzero == 0);
  f.erase_front(399990);
  f.resize(20);
  for (size_t i = 10; i < 20; ++i) CHECK(f[i] == 0);
  CHECK(f[0] == 399990);
}

TEST_CASE("grow array: a block between k_map_bytes and k_huge_bytes is mapped in pages", "[core]") {
  // int64: from 8,192 values (64 KiB) the array maps its own pages and grows them by mremap
  // (never through malloc's heap, where a grown block is copied); past 131,072 (1 MiB) it moves
  // to the huge-page tier. Values stay through each move; resize's zeros hold in the page tier.
  constexpr size_t k_pages = GrowArray<int64_t>::k_map_bytes / sizeof(int64_t);
  constexpr size_t k_huge = GrowArray<int64_t>::k_huge_bytes / sizeof(int64_t);
  static_assert(k_pages < k_huge);
  GrowArray<int64_t> a;
  for (size_t i = 0; i < k_pages; ++i) a.push_back(static_cast<int64_t>(i) * 3);
  CHECK(a.capacity() == k_pages);  // still malloc's, full
  a.push_back(-1);                 // the move into mapped pages
  CHECK(reinterpret_cast<uintptr_t>(a.data()) % 4096 == 0);
  CHECK(a.capacity() >= k_pages + 1);
  CHECK(a[k_pages - 1] == static_cast<int64_t>(k_pages - 1) * 3);
  for (size_t i = a.size(); i < k_huge / 2; ++i) a.push_back(static_cast<int64_t>(i));
  CHECK(a[k_pages] == -1);
  CHECK(a[k_huge / 2 - 1] == static_cast<int64_t>(k_huge / 2 - 1));
  CHECK(a[7] == 21);
  // Shrunk and regrown within the page tier: the places that held values read zero.
  a.resize(10);
  a.resize(k_huge / 2, 0);
  size_t nonzero = 0;
  for (size_t i = 10; i < a.size(); ++i) nonzero += a[i] != 0;
  CHECK(nonzero == 0);
  CHECK(a[9] == 27);
  a.erase_front(9);
  CHECK(a[0] == 27);
  // On into the huge-page tier, values kept.
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int64_t>(i) + 5;
  const size_t kept = a.size();
  a.resize(2 * k_huge, 0);
  // Moved into an aligned block (advised as huge pages where the budget has room), not grown
  // where the page-tier block lay.
  CHECK(reinterpret_cast<uintptr_t>(a.data()) % (size_t{2} << 20) == 0);
  CHECK(a[kept - 1] == static_cast<int64_t>(kept - 1) + 5);
  CHECK(a[kept] == 0);
  CHECK(a[2 * k_huge - 1] == 0);
  // Copied, the copy its own (a page-tier block from the start).
  GrowArray<int64_t> b;
  b.resize(k_pages * 2, 4);
  GrowArray<int64_t> c = b;
  c[0] = 1;
  CHECK(b[0] == 4);
  CHECK(c[k_pages * 2 - 1] == 4);
}

TEST_CASE("grow array: growth by push_back fills the page tier before huge pages", "[core]") {
  // A doubling that would cross k_huge_bytes stops a page short of it (grown_capacity): an array
  // a little past 512 KiB stays in 4 KiB pages; only values past that page tier's room move it
  // into an aligned huge-page block.
  constexpr size_t k_most = GrowArray<int64_t>::k_page_tier_most;
  static_assert(k_most * sizeof(int64_t) < GrowArray<int64_t>::k_huge_bytes);
  GrowArray<int64_t> a;
  const size_t half = GrowArray<int64_t>::k_huge_bytes / sizeof(int64_t) / 2;
  for (size_t i = 0; i <= half; ++i) a.push_back(static_cast<int64_t>(i));
  CHECK(a.capacity() == k_most);
  CHECK(a.huge_bytes() == 0);
  CHECK(a.grown_capacity(k_most + 1) == 2 * k_most);
  for (size_t i = a.size(); i <= k_most; ++i) a.push_back(static_cast<int64_t>(i));
  CHECK(a.capacity() >= k_most + 1);
  CHECK(reinterpret_cast<uintptr_t>(a.data()) % (size_t{2} << 20) == 0);
  CHECK(a[half] == static_cast<int64_t>(half));
  CHECK(a[k_most] == static_cast<int64_t>(k_most));
  // Asked for more than the page tier holds at once: past it straight away.
  GrowArray<int32_t> b;
  b.push_back(1);
  CHECK(b.grown_capacity(GrowArray<int32_t>::k_page_tier_most + 1) ==
        GrowArray<int32_t>::k_page_tier_most + 1);
  CHECK(b.grown_capacity(17) == 32);
}

TEST_CASE("grow array: the huge-page advice stays within the process's budget", "[core]") {
  // 40 blocks of 4 MiB (160 MiB) would each be advised whole: the first ones are, up to the
  // budget, the rest are mapped without the advice; every value stays; the budget comes back.
  const size_t before = g_grow_array_huge_bytes.load();
  constexpr size_t k_values = (size_t{4} << 20) / sizeof(int64_t);
  {
    std::vector<GrowArray<int64_t>> blocks(40);
    size_t advised = 0, plain = 0;
    for (size_t b = 0; b < blocks.size(); ++b) {
      blocks[b].resize(k_values, static_cast<int64_t>(b));
      advised += blocks[b].huge_bytes();
      plain += blocks[b].huge_bytes() == 0;
      CHECK(g_grow_array_huge_bytes.load() <= std::max(before, GrowArray<int64_t>::k_huge_budget));
    }
    CHECK(advised > 0);
    CHECK(plain > 0);
    CHECK(advised == g_grow_array_huge_bytes.load() - before);
    for (size_t b = 0; b < blocks.size(); ++b) {
      CHECK(blocks[b][0] == static_cast<int64_t>(b));
      CHECK(blocks[b][k_values - 1] == static_cast<int64_t>(b));
    }
    // Moved and grown, blocks keep their advice's count right.
    GrowArray<int64_t> moved = std::move(blocks[0]);
    moved.resize(3 * k_values, 1);
    CHECK(moved[k_values - 1] == 0);
    CHECK(moved[3 * k_values - 1] == 1);
  }
  CHECK(g_grow_array_huge_bytes.load() == before);
}

}  // namespace t_core_grow_array_test
