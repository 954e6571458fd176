#pragma once
// Zeroed memory whose pages are touched only where written: a large block is mapped from the
// kernel (mmap), whose fresh pages read as zero without being faulted in, and a small one comes
// from calloc. calloc alone does not promise this: where malloc serves a large request from
// memory the heap holds already (its top, kept by the top pad cli/main.cpp sets, or a freed
// block), it clears the block with memset and so touches every page of it. For tables that a
// run fills sparsely (the operator model's dense curves and decode stretches, the quantile
// sketches' histograms).
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace servesim {

/// Blocks of this many bytes or more are mapped.
inline constexpr size_t k_zeroed_map_bytes = size_t{64} << 10;

/// `bytes` of zeroed memory (at least 1 byte's block); throws std::bad_alloc when there is none.
/// Release with release_zeroed(p, bytes), the same bytes.
[[nodiscard]] inline void* allocate_zeroed(size_t bytes) {
  if (bytes >= k_zeroed_map_bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
  void* p = std::calloc(bytes > 0 ? bytes : 1, 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

inline void release_zeroed(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes >= k_zeroed_map_bytes) {
    (void)::munmap(p, bytes);
  } else {
    std::free(p);
  }
}

}  // namespace servesim
