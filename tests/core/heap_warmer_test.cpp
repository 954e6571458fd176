// HeapWarmer (core/heap_warmer.h): after warm(), pages the heap holds up to the program break
// are resident, and what was written in them before is unchanged.
#include "core/heap_warmer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

namespace t_core_heap_warmer_test {

using namespace servesim;

namespace {

/// How many of the `pages` pages from `p` are resident.
size_t resident(const char* p, size_t pages) {
  std::vector<unsigned char> in(pages);
  REQUIRE(mincore(const_cast<char*>(p), pages * 4096, in.data()) == 0);
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

}  // namespace

TEST_CASE("heap warmer: the heap's pages up to the break are resident, their contents kept",
          "[core]") {
  HeapWarmer warmer;
  warmer.warm();  // what the heap holds now
  // Fresh pages at the top of the heap: the break moved by hand, nothing touched but two.
  const long page = sysconf(_SC_PAGESIZE);
  REQUIRE(page == 4096);
  constexpr size_t k_pages = 256;
  void* const top = sbrk(0);
  const auto pad = static_cast<size_t>((page - reinterpret_cast<uintptr_t>(top) % page) % page);
  char* const base = static_cast<char*>(sbrk(static_cast<intptr_t>(pad + k_pages * 4096)));
  REQUIRE(base != reinterpret_cast<char*>(-1));
  char* const p = base + pad;
  (void)madvise(p, k_pages * 4096, MADV_NOHUGEPAGE);  // one page at a time, whatever THP's mode
  std::memcpy(p + 5 * 4096, "kept", 5);
  std::memcpy(p + 200 * 4096 + 17, "also", 5);
  CHECK(resident(p, k_pages) == 2);
  warmer.warm();
  if (resident(p, k_pages) == 2) {
    WARN("this kernel has no MADV_POPULATE_WRITE (before Linux 5.14): nothing to check");
  } else {
    CHECK(resident(p, k_pages) == k_pages);
    CHECK(std::strcmp(p + 5 * 4096, "kept") == 0);
    CHECK(std::strcmp(p + 200 * 4096 + 17, "also") == 0);
    CHECK(p[100 * 4096] == 0);
  }
  // The break goes back where it was when nothing took memory after it meanwhile.
  if (sbrk(0) == p + k_pages * 4096) (void)sbrk(-static_cast<intptr_t>(pad + k_pages * 4096));
}

}  // namespace t_core_heap_warmer_test
