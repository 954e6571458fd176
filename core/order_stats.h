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
#include <cstddef>
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
