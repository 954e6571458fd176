#pragma once
// A block key -> index map: open addressing, linear probing, backward-shift deletion. Keys are
// 64-bit block identities (never 0: 0 marks an empty slot); the home slot is the key's low bits,
// so keys must already be well mixed (they are hashes). Used by the GPU prefix cache (fixed
// size: never more keys than blocks) and by the offload tiers (grown by rehash as they fill).
// find, insert and erase allocate nothing; only the constructor and rehash do.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

class KeyTable {
 public:
  static constexpr int32_t k_none = -1;

  /// Room for `keys` keys at a load of at most one half (at least 16 slots).
  explicit KeyTable(size_t keys) {
    size_t n = 16;
    while (n < 2 * keys) n <<= 1;
    m_keys.assign(n, 0);
    m_vals.assign(n, k_none);
    m_mask = n - 1;
  }

  [[nodiscard]] size_t slots() const { return m_keys.size(); }

  /// The key's value, or k_none.
  [[nodiscard]] int32_t find(uint64_t key) const {
    for (size_t i = key & m_mask;; i = (i + 1) & m_mask) {
      if (m_keys[i] == key) return m_vals[i];
      if (m_keys[i] == 0) return k_none;
    }
  }

  /// Adds key -> val unless the key is already there (returns false then).
  /// REQUIRES: a free slot (the caller keeps the load under one half).
  bool insert(uint64_t key, int32_t val) {
    size_t i = key & m_mask;
    for (; m_keys[i] != 0; i = (i + 1) & m_mask)
      if (m_keys[i] == key) return false;
    m_keys[i] = key;
    m_vals[i] = val;
    return true;
  }

  /// Removes the key if it is there.
  void erase(uint64_t key) {
    size_t i = key & m_mask;
    while (m_keys[i] != key) {
      if (m_keys[i] == 0) return;
      i = (i + 1) & m_mask;
    }
    for (size_t j = (i + 1) & m_mask; m_keys[j] != 0; j = (j + 1) & m_mask) {
      const size_t home = m_keys[j] & m_mask;
      // Move j back into the hole at i if its probe run passes over i.
      if (((j - home) & m_mask) >= ((j - i) & m_mask)) {
        m_keys[i] = m_keys[j];
        m_vals[i] = m_vals[j];
        i = j;
      }
    }
    m_keys[i] = 0;
    m_vals[i] = k_none;
  }

  /// Moves every key into a table of `slots` slots (a power of two above twice the keys).
  void rehash(size_t slots) {
    std::vector<uint64_t> keys(slots, 0);
    std::vector<int32_t> vals(slots, k_none);
    keys.swap(m_keys);
    vals.swap(m_vals);
    m_mask = slots - 1;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != 0) insert(keys[i], vals[i]);
  }

 private:
  std::vector<uint64_t> m_keys;  // 0: empty
  std::vector<int32_t> m_vals;
  size_t m_mask = 0;
};

}  // namespace servesim
