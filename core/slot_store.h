#pragma once
// A growing array whose elements never move: fixed blocks of 2^k_shift slots, element i at
// block i >> k_shift, place i & mask. BatchState keeps its request slots here. A std::vector of
// 368-byte requests copied every slot into freshly touched pages at each doubling (on the Vidur
// benchmark, whose saturated replica queues thousands of requests, a third of the run's page
// faults); here growth adds a block and touches only the slots constructed in it, and a slot's
// address stays valid for the store's life (also across a move of the store).
//
// A block's slots are constructed one at a time as the store grows (emplace_back), so a block's
// pages are touched only as far as it is used. Elements are destroyed with the store.
//
// An access costs a vector's plus one load: the table keeps each block's address less the
// bytes of the slots before it (as an integer), so element i is at table[i >> k_shift] +
// i * sizeof(T), without masking i.
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace servesim {

template <class T, unsigned k_shift>
class SlotStore {
 public:
  static constexpr size_t k_block = size_t{1} << k_shift;  ///< slots per block
  static constexpr size_t k_mask = k_block - 1;

  SlotStore() = default;
  SlotStore(const SlotStore&) = delete;
  SlotStore& operator=(const SlotStore&) = delete;
  SlotStore(SlotStore&& o) noexcept
      : m_based(std::move(o.m_based)), m_size(std::exchange(o.m_size, 0)) {
    o.m_based.clear();
  }
  SlotStore& operator=(SlotStore&& o) noexcept {
    if (this == &o) return *this;
    release();
    m_based = std::move(o.m_based);
    o.m_based.clear();
    m_size = std::exchange(o.m_size, 0);
    return *this;
  }
  ~SlotStore() { release(); }

  [[nodiscard]] size_t size() const { return m_size; }
  [[nodiscard]] bool empty() const { return m_size == 0; }
  T& operator[](size_t i) {
    assert(i < m_size);
    return *reinterpret_cast<T*>(m_based[i >> k_shift] + i * sizeof(T));
  }
  const T& operator[](size_t i) const {
    assert(i < m_size);
    return *reinterpret_cast<const T*>(m_based[i >> k_shift] + i * sizeof(T));
  }
  /// Constructs a default T at index size() and returns it; the elements before it stay where
  /// they are. Throws std::bad_alloc (the store unchanged) when a new block cannot be had.
  T& emplace_back() {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);  // T may be incomplete above
    const size_t b = m_size >> k_shift;
    if (b == m_based.size()) {
      m_based.reserve(b + 1);  // before the allocation, so that a throw leaks nothing
      m_based.push_back(reinterpret_cast<uintptr_t>(::operator new(k_block * sizeof(T))) -
                        b * k_block * sizeof(T));
    }
    T* p = ::new (static_cast<void*>(block(b) + (m_size & k_mask))) T();
    ++m_size;
    return *p;
  }

  /// Forward iteration in index order (a range-for over every slot).
  template <bool k_const>
  class Iter {
    using Store = std::conditional_t<k_const, const SlotStore, SlotStore>;

   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<k_const, const T*, T*>;
    using reference = std::conditional_t<k_const, const T&, T&>;

    Iter() = default;
    Iter(Store* s, size_t i) : m_s(s), m_i(i) {}
    reference operator*() const { return (*m_s)[m_i]; }
    pointer operator->() const { return &(*m_s)[m_i]; }
    Iter& operator++() {
      ++m_i;
      return *this;
    }
    Iter operator++(int) {
      Iter t = *this;
      ++m_i;
      return t;
    }
    bool operator==(const Iter& o) const { return m_i == o.m_i; }
    bool operator!=(const Iter& o) const { return m_i != o.m_i; }

   private:
    Store* m_s = nullptr;
    size_t m_i = 0;
  };
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, m_size}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, m_size}; }

  /// Blocks allocated (each of k_block slots).
  [[nodiscard]] size_t blocks() const { return m_based.size(); }

 private:
  /// The first slot of block `b`.
  T* block(size_t b) const { return reinterpret_cast<T*>(m_based[b] + b * k_block * sizeof(T)); }
  void release() {
    for (size_t i = 0; i < m_size; ++i) (*this)[i].~T();
    for (size_t b = 0; b < m_based.size(); ++b) ::operator delete(block(b));
    m_based.clear();
    m_size = 0;
  }

  // Block b's address less b * k_block * sizeof(T) bytes (unsigned arithmetic: it may wrap).
  std::vector<uintptr_t> m_based;
  size_t m_size = 0;
};

}  // namespace servesim
