#pragma once
// Percentiles of a stream of non-negative values in bounded memory.
//
// Up to `exact_limit` values are kept and percentiles are exact (numpy's default linear
// interpolation between order statistics, as vLLM's benchmark reports them). Past that, every
// value moves into a log-linear histogram of 2^k_sub_bits buckets per power of two, and a
// percentile is the midpoint of the bucket that holds the order statistic: within a relative
// error of 2^-(k_sub_bits + 1) (0.05%) of an exact value in that bucket. Count, mean and max are
// always exact. Memory: 8 bytes a value up to the limit, then a fixed ~650 KB.
//
// add() is inline and cheap: the kept values go into chunks that are never moved (no copy as
// they grow, each page touched once) and are gathered into one array only when a percentile is
// asked for. add_repeated() takes one value many times (an engine step's inter-token gap, shared
// by every sequence that decoded in it) as one (value, count) run while the sketch is exact, and
// as one bucket increment past it: percentiles, count, max and exact() are those of the values
// one by one, whatever the order of the calls.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/zeroed_pages.h"

namespace servesim {

class ByteReader;  // core/byte_io.h

/// An allocator of zeroed memory (core/zeroed_pages.h: a large block is fresh pages from the
/// kernel, none touched until written) whose value-initialization writes nothing, so that a vector
/// resized from no capacity holds zeros without a page being touched. REQUIRES: a vector of it is
/// only resized up when it has never held a non-zero value in its capacity (assign() otherwise).
template <typename T>
struct ZeroedAllocator {
  static_assert(std::is_trivial_v<T>);
  using value_type = T;
  ZeroedAllocator() = default;
  template <typename U>
  explicit ZeroedAllocator(const ZeroedAllocator<U>& /*other*/) {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(allocate_zeroed(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) { release_zeroed(p, n * sizeof(T)); }
  template <typename U>
  void construct(U* /*p*/) noexcept {}  // value-initialized: calloc's zeros
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  friend bool operator==(const ZeroedAllocator&, const ZeroedAllocator&) { return true; }
};

class QuantileSketch {
 public:
  static constexpr int k_sub_bits = 10;
  /// Relative error bound of a percentile once the sketch is no longer exact.
  static constexpr double k_relative_error = 1.0 / (2 << k_sub_bits);
  static constexpr size_t k_default_exact_limit = size_t{1} << 21;

  explicit QuantileSketch(size_t exact_limit = k_default_exact_limit) : m_limit(exact_limit) {}
  QuantileSketch(const QuantileSketch& o);
  QuantileSketch& operator=(const QuantileSketch& o);
  QuantileSketch(QuantileSketch&& o) noexcept;
  QuantileSketch& operator=(QuantileSketch&& o) noexcept;
  ~QuantileSketch() = default;

  /// REQUIRES: v >= 0 and finite.
  void add(double v) {
    if (m_count == 0) {
      m_min = m_max = v;
    } else {
      m_min = v < m_min ? v : m_min;
      m_max = m_max < v ? v : m_max;
    }
    ++m_count;
    m_sum += v;
    if (m_histogram_mode) {
      ++m_buckets[bucket_of(v)];
      return;
    }
    // m_last is 0 while no value is kept (values are >= 0): the first is never out of order.
    if (v < m_last) m_sorted = false;
    m_last = v;
    if (m_tail_n == m_tail_cap) [[unlikely]] {
      keep_in_new_chunk(v);  // a call only here: this path needs no stack frame
      return;
    }
    m_tail[m_tail_n++] = v;
    if (static_cast<size_t>(m_count) > m_limit) to_histogram();
  }

  /// add(v) `count` times (count >= 1; v >= 0 and finite): the same percentiles, count, max and
  /// exact() as that many add(v) calls in any order; the sum gains v * count (one rounding).
  void add_repeated(double v, int64_t count);

  /// `values` more are about to be added: when they will take the sketch past its exact limit,
  /// it moves to the histogram now (the state those adds would end in), so that they go
  /// straight into buckets instead of being kept first.
  void expect(int64_t values) {
    if (!m_histogram_mode && values > 0 &&
        static_cast<size_t>(m_count) + static_cast<size_t>(values) > m_limit)
      to_histogram();
  }

  /// add_repeated for `n` (value, count) pairs, each the next call of `next()` returning a
  /// QuantileSketch::Repeat (a count of 0 adds nothing), in one loop with the running figures
  /// in registers. `next` is a copyable function object whose state is its own again after.
  struct Repeat {
    double v;
    int64_t n;
  };
  template <class Next>
  void add_repeated_each(size_t n, Next&& next);

  /// add(v) for each of `vs` in order, with the same result to the bit (the sum is taken in
  /// the same order), in a loop that keeps the running figures in registers.
  void add_all(std::span<const double> vs);
  /// add(v) for `n` values, each the next call of `next()`, calling `seen(v)` on each in order
  /// (both copyable function objects, whose state is theirs again after the call):
  /// add_all's loop for values made as they are taken (a request's inter-token gaps, with
  /// their own sums in `seen`), with add_all's result to the bit.
  /// Returns the largest of these values (0 when n is 0).
  template <class Next, class Seen>
  double add_each(size_t n, Next&& next, Seen&& seen);

  // Binary exponents covered (values in [2^(k_min_exp-1), 2^k_max_exp)); smaller values share
  // bucket 0 and larger ones the last bucket, whose midpoints are clamped to [min, max] anyway.
  // Seconds from about 1e-12 to 1e12 fall inside.
  static constexpr int k_min_exp = -40;
  static constexpr int k_max_exp = 40;
  static constexpr size_t k_per_exp = size_t{1} << k_sub_bits;
  static constexpr size_t k_buckets = static_cast<size_t>(k_max_exp - k_min_exp) * k_per_exp;

  /// The bucket of v: frexp's exponent and the top k_sub_bits bits of the fraction, read from
  /// the double's bits (frexp's f in [0.5, 1) is 0.5 + mantissa / 2^53, so (f - 0.5) * 2 *
  /// k_per_exp, truncated, is the mantissa's top bits exactly). The biased exponent and those
  /// bits are one shift of the bits, and the buckets start at biased exponent k_first_biased:
  /// so the bucket is that shift less an offset, clamped (zero, subnormals and, the sign bit
  /// making the shifted bits negative, -0.0 land in bucket 0; values of exponent above
  /// k_max_exp in the last). One shift, one subtraction and two compares, without branches.
  [[nodiscard]] static size_t bucket_of(double v) {
    constexpr int k_first_biased = 1023 + k_min_exp;  // frexp exponent k_min_exp + 1
    constexpr int64_t k_offset = int64_t{k_first_biased} << k_sub_bits;
    const int64_t i = (std::bit_cast<int64_t>(v) >> (52 - k_sub_bits)) - k_offset;
    const int64_t last = static_cast<int64_t>(k_buckets) - 1;
    return static_cast<size_t>(i < 0 ? 0 : (i > last ? last : i));
  }

  /// The least value whose bucket is not clamped (2^k_min_exp): every smaller one is counted in
  /// its bucket, bucket 0.
  static constexpr double k_bucket_floor = std::bit_cast<double>(uint64_t{1023 + k_min_exp} << 52);
  /// bucket_of(v) without its clamps, for a caller that raises a smaller v to k_bucket_floor
  /// (one max instead of two compares). REQUIRES: k_bucket_floor <= v < 2^k_max_exp (about
  /// 1.1e12: any whole number of nanoseconds below 2^63, in seconds).
  [[nodiscard]] static size_t bucket_in_range(double v) {
    constexpr int64_t k_offset = int64_t{1023 + k_min_exp} << k_sub_bits;  // as bucket_of's
    return static_cast<size_t>((std::bit_cast<int64_t>(v) >> (52 - k_sub_bits)) - k_offset);
  }

  /// Past the exact limit (REQUIRES: !exact()): the histogram's counts by bucket (bucket_of),
  /// for a caller that puts values straight into their buckets in a loop of its own and then
  /// tells the sketch with added_to_histogram.
  [[nodiscard]] int64_t* histogram() { return m_buckets.data(); }
  /// `count` (> 0) values were put into histogram()'s buckets, the least of them `lo` and the
  /// largest `hi`: count, min and max become those that adding them would give. The sum is left
  /// as it was: for a caller that keeps its values' sum itself (GapSketch's exact sums).
  void added_to_histogram(int64_t count, double lo, double hi) {
    m_min = m_count == 0 || lo < m_min ? lo : m_min;
    m_max = m_count == 0 || m_max < hi ? hi : m_max;
    m_count += count;
  }

  [[nodiscard]] int64_t count() const { return m_count; }
  [[nodiscard]] double mean() const { return m_count ? m_sum / static_cast<double>(m_count) : 0; }
  [[nodiscard]] double max() const { return m_max; }
  [[nodiscard]] bool exact() const { return !m_histogram_mode; }
  /// The values' sum, as add() takes it (in their order).
  [[nodiscard]] double sum() const { return m_sum; }
  /// Replaces the sum that mean() divides: a caller that sums parts of the stream in an order
  /// of its own (MetricsRecorder sums a cluster's values replica by replica).
  void set_sum(double s) { m_sum = s; }
  /// Adds every value of `o`: the kept values (or the histogram, past the limit) are then those
  /// of one sketch given both streams, in any order, so percentiles, count, max and exact() are
  /// too; the sum is this one's plus `o`'s (set_sum to sum in another order).
  void merge(const QuantileSketch& o);
  /// Sorts the kept values and runs now, so that a thread that built the sketch pays for it
  /// and later percentiles only read them.
  void prepare() {
    if (m_count > 0 && !m_histogram_mode) {
      sort_plain();
      sort_runs();
    }
  }
  /// p in [0, 100]; 0 when empty. Puts the two kept values it reads at their ranks
  /// (core/order_stats.h: the stretch between ranks already in place, not a whole sort), hence
  /// not const; the values read are those a sorted array would give.
  [[nodiscard]] double percentile(double p);
  /// percentile(p[i]) into out[i] for each i: the same values, the kept values' ranks found
  /// together in two passes that leave them in place (select_ranks_by_bits in
  /// core/order_stats.h) where percentile() would select each rank apart.
  /// REQUIRES: p.size() == out.size() <= 64.
  void percentiles(std::span<const double> p, std::span<double> out);

  /// Appends this sketch's state as bytes (core/byte_io.h; core/quantiles_io.cpp) for another
  /// process, which load()s it into an empty sketch of the same limit: the same state, kept
  /// values in the same order (merge() then folds it in exactly as it folds this one).
  void save(std::string& out) const;
  /// REQUIRES: this sketch is empty.
  void load(ByteReader& in);

 private:
  /// A run of kept values; `n` of the last chunk is m_tail_n while it is being filled.
  /// Frees a chunk's array: `bytes` of huge-page mapping, or 0 for an array from new[].
  struct ValuesFree {
    size_t bytes = 0;
    void operator()(double* p) const;
  };
  struct Chunk {
    std::unique_ptr<double[], ValuesFree> v;
    size_t n = 0, cap = 0;
  };
  /// An empty chunk of room `cap`: chunks of 2 MiB and more in their own mapping, asking for
  /// transparent huge pages (one page fault per 2 MiB instead of 512 where the kernel allows).
  static Chunk make_chunk(size_t cap);
  void new_chunk();
  /// The end of add(v) when the last chunk is full: a new one, v kept in it.
  void keep_in_new_chunk(double v);
  /// Gathers the plain values and sorts them (once: m_sorted).
  void sort_plain();
  /// Sorts the runs by value (once: m_runs_sorted).
  void sort_runs();
  /// The ranks placed by percentile() no longer hold (the plain values were replaced).
  void forget_ranks() {
    m_placed.clear();
    m_placed_at = -1;
  }
  /// Moves every kept value into one chunk (the first), in order.
  void gather();
  void to_histogram();
  /// The values kept one by one (not in runs).
  [[nodiscard]] int64_t plain_count() const { return m_count - m_run_values; }
  /// The two ranks percentile(p) reads (0-based) and the weight of the upper one.
  struct Ranks {
    int64_t lo = 0, hi = 0;
    double frac = 0;
  };
  [[nodiscard]] Ranks ranks_of(double p) const;
  /// The k-th smallest of the kept values and runs, 0-based (exact mode, runs present).
  [[nodiscard]] double exact_order_statistic(int64_t k);
  [[nodiscard]] double bucket_mid(size_t b) const;
  [[nodiscard]] double order_statistic(int64_t k) const;

  size_t m_limit;
  int64_t m_count = 0;
  double m_sum = 0, m_min = 0, m_max = 0, m_last = 0;
  std::vector<Chunk> m_chunks;
  double* m_tail = nullptr;  // the last chunk's values
  size_t m_tail_n = 0, m_tail_cap = 0;
  bool m_sorted = true;
  bool m_histogram_mode = false;
  std::vector<int64_t, ZeroedAllocator<int64_t>> m_buckets;
  /// add_repeated's values while exact: (value, count), and their counts' total.
  using Run = Repeat;
  std::vector<Run> m_runs;
  int64_t m_run_values = 0;
  bool m_runs_sorted = true;
  /// The ranks percentile() has put in place among the plain values (select_rank), while
  /// there are m_placed_at of them: the values are only ever appended (or all moved to the
  /// histogram), so a different count means the ranks are stale.
  std::vector<size_t> m_placed;
  int64_t m_placed_at = -1;
};

template <class Next>
void QuantileSketch::add_repeated_each(size_t n, Next&& next_in) {
  std::remove_cvref_t<Next> next = next_in;
  double sum = m_sum, lo = HUGE_VAL, hi = -HUGE_VAL;
  int64_t count = m_count;
  size_t i = 0;
  if (!m_histogram_mode) {
    if (m_runs.capacity() < m_runs.size() + n)
      m_runs.reserve(std::max(m_runs.size() + n, 2 * m_runs.capacity()));
    for (; i < n; ++i) {
      const Repeat r = next();
      if (r.n <= 0) continue;
      lo = r.v < lo ? r.v : lo;
      hi = hi < r.v ? r.v : hi;
      sum += r.v * static_cast<double>(r.n);
      if (!m_runs.empty() && r.v < m_runs.back().v) m_runs_sorted = false;
      m_runs.push_back({r.v, r.n});
      m_run_values += r.n;
      count += r.n;
      if (static_cast<size_t>(count) > m_limit) {
        ++i;
        break;
      }
    }
  }
  const bool was_empty = m_count == 0;
  m_count = count;
  if (!m_histogram_mode && static_cast<size_t>(m_count) > m_limit) to_histogram();
  if (m_histogram_mode) {
    // The count in a register: a bucket's store could otherwise alias m_count.
    int64_t* buckets = m_buckets.data();
    int64_t added = 0;
    for (; i < n; ++i) {
      const Repeat r = next();
      if (r.n <= 0) continue;
      lo = r.v < lo ? r.v : lo;
      hi = hi < r.v ? r.v : hi;
      sum += r.v * static_cast<double>(r.n);
      buckets[bucket_of(r.v)] += r.n;
      added += r.n;
    }
    m_count += added;
  }
  m_sum = sum;
  if (lo <= hi) {
    m_min = was_empty || lo < m_min ? lo : m_min;
    m_max = was_empty || m_max < hi ? hi : m_max;
  }
  next_in = next;
}

template <class Next, class Seen>
double QuantileSketch::add_each(size_t n, Next&& next_in, Seen&& seen_in) {
  if (n == 0) return 0;
  // Local copies of the two functions' state, written back at the end: the compiler keeps
  // their fields in registers (a reference's could be aliased by the stores of kept values).
  std::remove_cvref_t<Next> next = next_in;
  std::remove_cvref_t<Seen> seen = seen_in;
  // Each value is made once: its place (kept, or counted in its bucket), the running sum and
  // these values' extremes in the same loop, the figures in registers. The sum is taken in the
  // values' order, as add() would; the extremes (exact whatever the order) are folded into the
  // sketch's after the loop. Once the kept values are known unsorted, the loop stops checking.
  double sum = m_sum, lo = HUGE_VAL, hi = -HUGE_VAL;
  size_t i = 0;
  while (i < n && !m_histogram_mode) {
    if (m_tail_n == m_tail_cap) {
      ++m_count;  // new_chunk sizes from the values kept before this one
      new_chunk();
      --m_count;
    }
    const size_t to_limit = m_limit - static_cast<size_t>(m_count);  // >= 0 while exact
    const size_t room = std::min(m_tail_cap - m_tail_n, to_limit + (to_limit < SIZE_MAX ? 1 : 0));
    const size_t k = std::min(room, n - i);
    double* out = m_tail + m_tail_n;
    if (m_sorted) {
      bool sorted = true;
      double last = m_last;
      for (size_t j = 0; j < k; ++j) {
        const double v = next();
        lo = v < lo ? v : lo;
        hi = hi < v ? v : hi;
        sum += v;
        if ((m_count > 0 || j > 0) && v < last) sorted = false;
        last = v;
        out[j] = v;
        seen(v);
      }
      m_sorted = sorted;
      m_last = last;
    } else {
      for (size_t j = 0; j < k; ++j) {
        const double v = next();
        lo = v < lo ? v : lo;
        hi = hi < v ? v : hi;
        sum += v;
        out[j] = v;
        seen(v);
      }
      m_last = out[k - 1];
    }
    m_tail_n += k;
    m_count += static_cast<int64_t>(k);
    i += k;
    if (static_cast<size_t>(m_count) > m_limit) to_histogram();
  }
  int64_t* buckets = m_buckets.data();
  for (size_t j = i; j < n; ++j) {
    const double v = next();
    lo = v < lo ? v : lo;
    hi = hi < v ? v : hi;
    sum += v;
    ++buckets[bucket_of(v)];
    seen(v);
  }
  const bool was_empty = m_count == static_cast<int64_t>(i);  // before these values
  m_count += static_cast<int64_t>(n - i);
  m_sum = sum;
  m_min = was_empty || lo < m_min ? lo : m_min;
  m_max = was_empty || m_max < hi ? hi : m_max;
  next_in = next;
  seen_in = seen;
  return hi;
}

}  // namespace servesim
