#pragma once
// A growing array of trivially copyable values that grows without a vector's allocate-copy-free:
// small blocks with realloc, and from k_map_bytes (64 KiB) on in pages the array maps itself and
// grows by remapping them (mremap), so the values already there are neither copied nor faulted
// in again. (glibc's realloc would do the same only past its mmap threshold, which starts at
// 128 KiB but rises to the size of any mapped block freed before: in a run that has freed a
// large buffer, the step ends grew on malloc's heap, each doubling a copy.) For arrays that grow
// by the step over a whole run (MetricsRecorder's step ends and gap counts: 4 MB on the Azure
// benchmark, whose doublings through std::vector were a third of the run's page faults). The
// subset of std::vector's interface those arrays use.
//
// Past k_huge_bytes a block is mapped by the array itself, in whole 2 MiB pieces aligned to
// 2 MiB and advised as transparent huge pages (madvise MADV_HUGEPAGE): where the kernel
// grants them (`transparent_hugepage/enabled` is `always` or `madvise`) one fault maps 2 MiB
// instead of 4 KiB, so a run's 5 MB of step ends and gap counts take a handful of faults
// instead of about 1,300; elsewhere the advice is ignored and the pages come as before. Such a
// block grows by moving its pages (mremap), never by copying, and its pages come zeroed, so
// resize() writes zeros only where values were kept before (m_written). A huge page is taken
// whole at its first touch, so a block wastes up to 2 MiB past its last value: the process
// advises at most k_huge_budget bytes at once (a fleet's thousand replicas each keeping step
// ends would otherwise waste up to 2 MiB apiece), and blocks mapped past it are not advised.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace servesim {

/// Bytes of GrowArray blocks advised as huge pages now, over the process (GrowArray::map).
inline std::atomic<size_t> g_grow_array_huge_bytes{0};

template <class T>
class GrowArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  GrowArray() = default;
  GrowArray(const GrowArray& o) { *this = o; }
  GrowArray(GrowArray&& o) noexcept
      : m_v(o.m_v),
        m_n(o.m_n),
        m_cap(o.m_cap),
        m_mapped(o.m_mapped),
        m_written(o.m_written),
        m_advised(o.m_advised) {
    o.m_v = nullptr;
    o.m_n = o.m_cap = o.m_mapped = o.m_written = o.m_advised = 0;
  }
  GrowArray& operator=(const GrowArray& o) {
    if (this == &o) return *this;
    note_written();
    m_n = 0;
    reserve(o.m_n);
    if (o.m_n > 0) std::memcpy(m_v, o.m_v, o.m_n * sizeof(T));
    m_n = o.m_n;
    return *this;
  }
  GrowArray& operator=(GrowArray&& o) noexcept {
    if (this == &o) return *this;
    release();
    m_v = o.m_v;
    m_n = o.m_n;
    m_cap = o.m_cap;
    m_mapped = o.m_mapped;
    m_written = o.m_written;
    m_advised = o.m_advised;
    o.m_v = nullptr;
    o.m_n = o.m_cap = o.m_mapped = o.m_written = o.m_advised = 0;
    return *this;
  }
  ~GrowArray() { release(); }

  [[nodiscard]] size_t size() const { return m_n; }
  [[nodiscard]] size_t capacity() const { return m_cap; }
  [[nodiscard]] bool empty() const { return m_n == 0; }
  [[nodiscard]] T* data() { return m_v; }
  [[nodiscard]] const T* data() const { return m_v; }
  [[nodiscard]] T* begin() { return m_v; }
  [[nodiscard]] T* end() { return m_v + m_n; }
  [[nodiscard]] const T* begin() const { return m_v; }
  [[nodiscard]] const T* end() const { return m_v + m_n; }
  // Checked in debug builds (the sanitized suite): an index past the size is a bug even where
  // the block's capacity would hold it.
  T& operator[](size_t i) {
    assert(i < m_n);
    return m_v[i];
  }
  const T& operator[](size_t i) const {
    assert(i < m_n);
    return m_v[i];
  }
  [[nodiscard]] const T& back() const { return m_v[m_n - 1]; }

  void push_back(T v) {
    if (m_n == m_cap) reserve(grown_capacity(m_n + 1));
    m_v[m_n++] = v;
  }
  /// The capacity a growth to at least `n` values takes: twice the present one (16 at first),
  /// except that a block fills the page tier, up to just under k_huge_bytes, before it moves
  /// into huge pages. A move costs 2 MiB of zeroed memory at once and a copy, worth it for an
  /// array that goes on growing (Azure's 4 MB of step ends) but not for one that ends a little
  /// past a doubling (the Vidur comparison's 540 KB of step ends asked for 1 MiB: two huge
  /// pages, 0.6 ms of a 16 ms run, where the page tier's growth to 1 MiB costs 7 faults).
  [[nodiscard]] size_t grown_capacity(size_t n) const {
    size_t c = std::max(n, m_cap < 16 ? size_t{16} : 2 * m_cap);
    if (m_cap < k_page_tier_most && c > k_page_tier_most && n <= k_page_tier_most)
      c = k_page_tier_most;
    return c;
  }
  /// Grows to `n` values, the new ones `v` (or shrinks to `n`).
  void resize(size_t n, T v = T{}) {
    if (n > m_cap) reserve(n);
    // A mapped block's values past any kept before are zero bytes already.
    const size_t fill_to = m_mapped > 0 && is_zero(v) ? std::min(n, std::max(m_written, m_n)) : n;
    for (size_t i = m_n; i < fill_to; ++i) m_v[i] = v;
    note_written();
    m_n = n;
  }
  /// Removes the first `k` values (k <= size()), moving the rest to the front.
  void erase_front(size_t k) {
    if (k == 0) return;
    std::memmove(m_v, m_v + k, (m_n - k) * sizeof(T));
    note_written();
    m_n -= k;
  }
  /// Room for `n` values; throws std::bad_alloc when there is none.
  void reserve(size_t n) {
    if (n <= m_cap) return;
    if (n > (static_cast<size_t>(-1) - k_huge) / sizeof(T)) throw std::bad_alloc();
    if (n * sizeof(T) >= k_huge_bytes) {
      map(n);
      return;
    }
    if (n * sizeof(T) >= k_map_bytes || m_mapped > 0) {
      map_pages(n);
      return;
    }
    void* p = std::realloc(m_v, n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    m_v = static_cast<T*>(p);
    m_cap = n;
  }

  /// A block this large or larger (and smaller than k_huge_bytes) is mapped by the array in
  /// 4 KiB pages and grown by moving them (see the top of this file).
  static constexpr size_t k_map_bytes = size_t{64} << 10;
  /// A block this large or larger is mapped in huge pages (see the top of this file).
  static constexpr size_t k_huge_bytes = size_t{1} << 20;
  /// The most values grown_capacity() keeps in the page tier: a page under k_huge_bytes.
  static constexpr size_t k_page_tier_most = (k_huge_bytes - 4096) / sizeof(T);
  /// The most bytes of blocks advised as huge pages at once, over the process.
  static constexpr size_t k_huge_budget = size_t{64} << 20;
  /// Bytes of this block advised as huge pages.
  [[nodiscard]] size_t huge_bytes() const { return m_advised; }

 private:
  static constexpr size_t k_huge = size_t{2} << 20;  // the huge page: 2 MiB on x86-64

  static bool is_zero(const T& v) {
    static constexpr T zero{};
    return std::memcmp(&v, &zero, sizeof(T)) == 0;
  }
  // Values past m_written were never stored in a mapped block (its fresh pages are zero).
  void note_written() { m_written = std::max(m_written, m_n); }

  /// Room for `n` values in a mapped block: grown where it lies if the pages after it are
  /// free, else moved (its pages, not copied) into a new one aligned to k_huge.
  void map(size_t n) {
    const size_t bytes = (n * sizeof(T) + k_huge - 1) / k_huge * k_huge;
    // Grown where it lies only from the huge-page tier (a block of map_pages moves into an
    // aligned one, to be advised).
    if (m_mapped > 0 && m_mapped % k_huge == 0 && ::mremap(m_v, m_mapped, bytes, 0) != MAP_FAILED) {
      if (m_advised == m_mapped &&
          advise(reinterpret_cast<char*>(m_v) + m_mapped, bytes - m_mapped))
        m_advised = bytes;
      m_mapped = bytes;
      m_cap = bytes / sizeof(T);
      return;
    }
    // Mapped with a huge page's slack, then trimmed to an aligned start.
    void* raw =
        ::mmap(nullptr, bytes + k_huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + k_huge - 1) / k_huge * k_huge;
    if (aligned > start) (void)::munmap(raw, aligned - start);
    if (start + k_huge > aligned)
      (void)::munmap(reinterpret_cast<void*>(aligned + bytes), start + k_huge - aligned);
    void* p = reinterpret_cast<void*>(aligned);
    const size_t advised = advise(p, bytes) ? bytes : 0;
    if (m_mapped > 0) {
      // The old pages move over the new block's start (MREMAP_FIXED unmaps what was there);
      // but a block of map_pages moving into advised room is copied: its 4 KiB pages would
      // keep the first huge page from forming, where the copy's first touch takes it whole.
      const bool copy = advised > 0 && m_mapped % k_huge != 0;
      if (copy ||
          ::mremap(m_v, m_mapped, m_mapped, MREMAP_MAYMOVE | MREMAP_FIXED, p) == MAP_FAILED) {
        std::memcpy(p, m_v, m_n * sizeof(T));
        (void)::munmap(m_v, m_mapped);
        m_written = m_n;
      }
    } else {
      if (m_n > 0) std::memcpy(p, m_v, m_n * sizeof(T));
      std::free(m_v);
      m_written = m_n;
    }
    g_grow_array_huge_bytes.fetch_sub(m_advised, std::memory_order_relaxed);
    m_advised = advised;
    m_v = static_cast<T*>(p);
    m_mapped = bytes;
    m_cap = bytes / sizeof(T);
  }
  /// Room for `n` values in a block mapped in 4 KiB pages, not advised: grown by mremap, which
  /// moves the pages where it must (no copy, no fault for the values kept).
  void map_pages(size_t n) {
    const size_t page = 4096;
    const size_t bytes = (n * sizeof(T) + page - 1) / page * page;
    if (m_mapped > 0) {
      void* p = ::mremap(m_v, m_mapped, bytes, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) throw std::bad_alloc();
      m_v = static_cast<T*>(p);
    } else {
      void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      if (m_n > 0) std::memcpy(p, m_v, m_n * sizeof(T));
      std::free(m_v);
      m_written = m_n;
      m_v = static_cast<T*>(p);
    }
    m_mapped = bytes;
    m_cap = bytes / sizeof(T);
  }
  /// Advises [p, p + bytes) as huge pages where the process's budget has room for them.
  static bool advise(void* p, size_t bytes) {
    size_t now = g_grow_array_huge_bytes.load(std::memory_order_relaxed);
    do {
      if (bytes > k_huge_budget - std::min(now, k_huge_budget)) return false;
    } while (!g_grow_array_huge_bytes.compare_exchange_weak(now, now + bytes,
                                                            std::memory_order_relaxed));
    (void)::madvise(p, bytes, MADV_HUGEPAGE);
    return true;
  }
  void release() {
    g_grow_array_huge_bytes.fetch_sub(m_advised, std::memory_order_relaxed);
    if (m_mapped > 0)
      (void)::munmap(m_v, m_mapped);
    else
      std::free(m_v);
  }

  T* m_v = nullptr;
  size_t m_n = 0, m_cap = 0;
  size_t m_mapped = 0;   // bytes mapped by map(); 0: m_v is malloc's (or null)
  size_t m_written = 0;  // a mapped block: values at or past this were never stored
  size_t m_advised = 0;  // bytes of it advised as huge pages (counted in the process's budget)
};

}  // namespace servesim
