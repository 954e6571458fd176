#pragma once
// A growing array of trivially copyable values that grows with realloc instead of a vector's
// allocate-copy-free: past malloc's mmap threshold (128 KiB at first) glibc moves a block by
// remapping its pages (mremap), so the values already there are neither copied nor faulted in
// again. For arrays that grow by the step over a whole run (MetricsRecorder's step ends and gap
// counts: 4 MB on the Azure benchmark, whose doublings through std::vector were a third of the
// run's page faults). The subset of std::vector's interface those arrays use.
#include <cassert>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace servesim {

template <class T>
class GrowArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  GrowArray() = default;
  GrowArray(const GrowArray& o) { *this = o; }
  GrowArray(GrowArray&& o) noexcept : m_v(o.m_v), m_n(o.m_n), m_cap(o.m_cap) {
    o.m_v = nullptr;
    o.m_n = o.m_cap = 0;
  }
  GrowArray& operator=(const GrowArray& o) {
    if (this == &o) return *this;
    m_n = 0;
    reserve(o.m_n);
    if (o.m_n > 0) std::memcpy(m_v, o.m_v, o.m_n * sizeof(T));
    m_n = o.m_n;
    return *this;
  }
  GrowArray& operator=(GrowArray&& o) noexcept {
    if (this == &o) return *this;
    std::free(m_v);
    m_v = o.m_v;
    m_n = o.m_n;
    m_cap = o.m_cap;
    o.m_v = nullptr;
    o.m_n = o.m_cap = 0;
    return *this;
  }
  ~GrowArray() { std::free(m_v); }

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
    if (m_n == m_cap) reserve(m_cap < 16 ? 16 : 2 * m_cap);
    m_v[m_n++] = v;
  }
  /// Grows to `n` values, the new ones `v` (or shrinks to `n`).
  void resize(size_t n, T v = T{}) {
    if (n > m_cap) reserve(n);
    for (size_t i = m_n; i < n; ++i) m_v[i] = v;
    m_n = n;
  }
  /// Removes the first `k` values (k <= size()), moving the rest to the front.
  void erase_front(size_t k) {
    if (k == 0) return;
    std::memmove(m_v, m_v + k, (m_n - k) * sizeof(T));
    m_n -= k;
  }
  /// Room for `n` values; throws std::bad_alloc when there is none.
  void reserve(size_t n) {
    if (n <= m_cap) return;
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    void* p = std::realloc(m_v, n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    m_v = static_cast<T*>(p);
    m_cap = n;
  }

 private:
  T* m_v = nullptr;
  size_t m_n = 0, m_cap = 0;
};

}  // namespace servesim
