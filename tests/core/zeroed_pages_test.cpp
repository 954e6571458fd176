// core/zeroed_pages.h: zeroed blocks whose pages are touched only where written, even when the
// heap holds enough free memory to serve them (where calloc would memset every page).
#include "core/zeroed_pages.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/quantiles.h"

namespace t_core_zeroed_pages_test {

using namespace servesim;

namespace {

/// Pages of [p, p + bytes) resident now (mincore); p is page-aligned.
size_t resident_pages(const void* p, size_t bytes) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  REQUIRE(mincore(const_cast<void*>(p), bytes, in.data()) == 0);
  size_t n = 0;
  for (const unsigned char c : in) n += c & 1u;
  return n;
}

}  // namespace

TEST_CASE("zeroed pages: a large block reads zero and its pages come only as written", "[core]") {
  // The heap first holds a large free block at its top (cli/main.cpp's top pad keeps it), from
  // which calloc would serve the request and clear it page by page.
  mallopt(M_TOP_PAD, 4 << 20);
  void* warm = std::malloc(size_t{2} << 20);
  REQUIRE(warm != nullptr);
  static_cast<volatile char*>(warm)[0] = 1;
  std::free(warm);

  const size_t bytes = size_t{1} << 20;
  auto* p = static_cast<unsigned char*>(allocate_zeroed(bytes));
  CHECK(reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)) == 0);
  CHECK(resident_pages(p, bytes) == 0);
  p[5000] = 7;
  CHECK(resident_pages(p, bytes) == 1);
  size_t nonzero = 0;
  for (size_t i = 0; i < bytes; i += 4096) nonzero += p[i] != 0;  // reads fault no page in
  CHECK(nonzero == 0);
  CHECK(p[5000] == 7);
  release_zeroed(p, bytes);
}

TEST_CASE("zeroed pages: small and empty blocks are zeroed too", "[core]") {
  for (const size_t bytes :
       {size_t{0}, size_t{1}, size_t{100}, k_zeroed_map_bytes - 1, k_zeroed_map_bytes}) {
    auto* p = static_cast<unsigned char*>(allocate_zeroed(bytes));
    REQUIRE(p != nullptr);
    bool zero = true;
    for (size_t i = 0; i < bytes; ++i) zero = zero && p[i] == 0;
    CHECK(zero);
    if (bytes > 0) p[bytes - 1] = 1;  // writable to its end
    release_zeroed(p, bytes);
  }
}

TEST_CASE("zeroed pages: a zeroed vector's large buffer is not touched when it is sized",
          "[core]") {
  std::vector<int64_t, ZeroedAllocator<int64_t>> v;
  v.resize(size_t{1} << 17);  // 1 MiB of zeros
  CHECK(resident_pages(v.data(), v.size() * sizeof(int64_t)) == 0);
  CHECK(v[12345] == 0);
  v[0] = 3;
  CHECK(v[0] == 3);
}

}  // namespace t_core_zeroed_pages_test
