#pragma once
// A least-significant-digit radix sort by an unsigned 64-bit key, for arrays long enough that
// std::sort's n log n comparisons cost more than a few passes of counting and scattering. Used
// where a summary sorts tens of thousands of (value, count) pairs at once: a fleet's per-replica
// inter-token-gap distributions (core/quantiles.cpp), where std::sort of the pairs took about a
// sixth of a 64-replica run's instructions.
//
// Digits of 11 bits (six passes cover 64 bits); one pass counts every digit's values, and a
// digit on which all the items agree (the exponent bits of positive doubles of one magnitude,
// say) is skipped. The sort is stable.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace servesim {

/// Sorts `items` by key(item) ascending, stably. `scratch` is room of the same type, resized to
/// items' size (kept by a caller that sorts often; its contents on return are unspecified).
template <class T, class Key>
void radix_sort(std::vector<T>& items, std::vector<T>& scratch, Key key) {
  constexpr int k_bits = 11;
  constexpr int k_digits = (64 + k_bits - 1) / k_bits;
  constexpr size_t k_radix = size_t{1} << k_bits;
  constexpr uint64_t k_mask = k_radix - 1;
  const size_t n = items.size();
  if (n < 2) return;
  if (n > UINT32_MAX) {  // beyond the counters' range
    std::stable_sort(items.begin(), items.end(),
                     [&](const T& a, const T& b) { return key(a) < key(b); });
    return;
  }
  // Counts of every digit's values, in one pass over the items.
  std::vector<std::array<uint32_t, k_radix>> counts(k_digits);
  for (auto& c : counts) c.fill(0);
  for (const T& item : items) {
    const uint64_t k = key(item);
    for (int d = 0; d < k_digits; ++d) ++counts[d][(k >> (d * k_bits)) & k_mask];
  }
  scratch.resize(n);
  T* from = items.data();
  T* to = scratch.data();
  for (int d = 0; d < k_digits; ++d) {
    std::array<uint32_t, k_radix>& c = counts[d];
    const uint64_t first = (key(*from) >> (d * k_bits)) & k_mask;
    if (c[first] == n) continue;  // every item has this digit: the order stands
    // Each digit's first place in the output.
    uint32_t at = 0;
    for (uint32_t& x : c) {
      const uint32_t here = x;
      x = at;
      at += here;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t digit = (key(from[i]) >> (d * k_bits)) & k_mask;
      to[c[digit]++] = std::move(from[i]);
    }
    std::swap(from, to);
  }
  if (from != items.data()) items.swap(scratch);
}

}  // namespace servesim
