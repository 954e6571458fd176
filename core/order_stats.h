#pragma once
// Order statistics of an array without sorting it whole: the value at rank k (0-based) is the
// one std::sort would put at index k. A summary asks for four percentiles and a max of each of
// its distributions (two ranks a percentile), and sorting ~20,000 kept values for them took
// ~28 M instructions of a 19,366-request run; selecting the ranks takes a few passes instead.
//
// Each selection is std::nth_element over the stretch between the ranks already in place: once
// rank k is in place, every value before index k is <= it and every value after is >= it, so a
// later rank is found inside the stretch that holds it, and ranks asked for in any order give
// the sorted array's values. (Values that compare equal but differ in bits, -0.0 and +0.0, may
// come out in either order, as they may from std::sort.)
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace servesim {

/// The value at rank `k` (0-based) of the ascending order of v[0..n), given `placed`: the ranks
/// already in place in `v` (ascending), which it updates. For a holder that keeps the ranks
/// beside its values (and clears them whenever a value is added or moved). REQUIRES: k < n;
/// every rank in `placed` was put in place by this function on these values, unchanged since.
/// Reorders `v` only within the stretch between the nearest ranks already in place.
[[nodiscard]] inline double select_rank(double* v, size_t n, size_t k,
                                        std::vector<size_t>& placed) {
  const auto it = std::lower_bound(placed.begin(), placed.end(), k);
  if (it != placed.end() && *it == k) return v[k];
  const size_t from = it == placed.begin() ? 0 : *(it - 1) + 1;
  const size_t to = it == placed.end() ? n : *it;
  std::nth_element(v + from, v + k, v + to);
  placed.insert(it, k);
  return v[k];
}

/// Several ranks of the values in `parts` (one array in pieces) at once, for a summary's
/// percentiles: out[i] is the value at rank ks[i] (0-based) of their ascending order, the one
/// std::sort would put there. The values are not reordered (nor gathered into one array). Two
/// passes instead of a selection per rank: the values are counted into buckets of their bits
/// (a non-negative double's bits order as it does), then the values of the buckets holding the
/// ranks are gathered and each rank selected among them. Returns false (out unspecified)
/// unless every value is >= +0.0 and in [lo, hi] by its bits: a negative value, -0.0 or NaN,
/// whose order is not its bits' (the caller then selects by comparison).
/// REQUIRES: lo and hi are the least and greatest of the values (m_min and m_max); the values
/// number fewer than 2^32; every ks[i] < their number; ks.size() == out.size() <= 255.
[[nodiscard]] inline bool select_ranks_by_bits(std::span<const std::span<const double>> parts,
                                               double lo, double hi, std::span<const size_t> ks,
                                               std::span<double> out) {
  if (std::signbit(lo) || !(lo <= hi)) return false;
  const uint64_t base = std::bit_cast<uint64_t>(lo);
  const uint64_t range = std::bit_cast<uint64_t>(hi) - base;
  // At most 4,096 buckets: the bits' span shifted down until it fits.
  int shift = 0;
  while ((range >> shift) >= 4096) ++shift;
  const size_t buckets = static_cast<size_t>(range >> shift) + 1;
  std::vector<uint32_t> count(buckets + 1, 0);
  for (const std::span<const double> part : parts) {
    for (const double x : part) {
      const uint64_t d = std::bit_cast<uint64_t>(x) - base;
      if (d > range) return false;
      ++count[d >> shift];
    }
  }
  // count[b] becomes the rank of bucket b's first value; the buckets holding a rank get a slot.
  uint32_t at = 0;
  for (size_t b = 0; b <= buckets; ++b) {
    const uint32_t c = count[b];
    count[b] = at;
    at += c;
  }
  std::vector<uint8_t> slot(buckets, 0);
  std::vector<size_t> bucket_of(ks.size());
  std::vector<size_t> slot_start{0}, slot_bucket;
  for (size_t i = 0; i < ks.size(); ++i) {
    const size_t b = static_cast<size_t>(
        std::upper_bound(count.begin(), count.begin() + static_cast<std::ptrdiff_t>(buckets),
                         static_cast<uint32_t>(ks[i])) -
        count.begin() - 1);
    bucket_of[i] = b;
    if (slot[b] == 0) {
      slot_bucket.push_back(b);
      slot[b] = static_cast<uint8_t>(slot_bucket.size());
      slot_start.push_back(slot_start.back() + (count[b + 1] - count[b]));
    }
  }
  std::vector<double> kept(slot_start.back());
  std::vector<size_t> next(slot_start.begin(), slot_start.end() - 1);
  for (const std::span<const double> part : parts) {
    for (const double x : part) {
      const uint8_t s = slot[(std::bit_cast<uint64_t>(x) - base) >> shift];
      if (s != 0) kept[next[s - 1]++] = x;
    }
  }
  // Each bucket's ranks among its values: by comparison in a small bucket, else by the same
  // two passes over the bucket (its bits' span at most 1/4,096 of this one: a bucket holding
  // most values, as a quarter of a binade does when the least value is 0, is split again).
  std::vector<size_t> sub_ks;
  std::vector<double> sub_out;
  for (size_t s = 0; s < slot_bucket.size(); ++s) {
    double* first = kept.data() + slot_start[s];
    double* last = kept.data() + slot_start[s + 1];
    const size_t b = slot_bucket[s];
    sub_ks.clear();
    for (size_t i = 0; i < ks.size(); ++i)
      if (bucket_of[i] == b) sub_ks.push_back(ks[i] - count[b]);
    sub_out.assign(sub_ks.size(), 0.0);
    const auto [least, most] = std::minmax_element(first, last);
    if (*least == *most) {
      std::fill(sub_out.begin(), sub_out.end(), *least);
    } else if (last - first <= 64) {
      for (size_t j = 0; j < sub_ks.size(); ++j) {
        std::nth_element(first, first + sub_ks[j], last);
        sub_out[j] = first[sub_ks[j]];
      }
    } else {
      const std::span<const double> bucket(first, last);
      (void)select_ranks_by_bits(std::span(&bucket, 1), *least, *most, sub_ks, sub_out);
    }
    for (size_t i = 0, j = 0; i < ks.size(); ++i)
      if (bucket_of[i] == b) out[i] = sub_out[j++];
  }
  return true;
}

/// select_ranks_by_bits over one array v[0..n).
[[nodiscard]] inline bool select_ranks_by_bits(const double* v, size_t n, double lo, double hi,
                                               std::span<const size_t> ks, std::span<double> out) {
  const std::span<const double> all(v, n);
  return select_ranks_by_bits(std::span(&all, 1), lo, hi, ks, out);
}

/// select_rank over one array, keeping its own ranks.
class RankSelector {
 public:
  /// REQUIRES: `v` holds `n` values and outlives this selector, and nothing else reorders or
  /// changes them while it is in use (its ranks in place would no longer be).
  RankSelector(double* v, size_t n) : m_v(v), m_n(n) {}

  /// The value at rank `k` of the ascending order. REQUIRES: k < n.
  [[nodiscard]] double at(size_t k) { return select_rank(m_v, m_n, k, m_placed); }

  /// The ranks in place so far, ascending.
  [[nodiscard]] const std::vector<size_t>& placed() const { return m_placed; }

 private:
  double* m_v;
  size_t m_n;
  std::vector<size_t> m_placed;  // ascending
};

}  // namespace servesim
