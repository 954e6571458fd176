#pragma once
// Inter-token latency (ITL): the gaps between consecutive output tokens of a request, pooled
// over finished requests (docs/metrics.md#inter-token-latency-itl). One definition serves
// summary.json (MetricsRecorder) and the exports and `--percentiles` (TokenTimes,
// metrics/exports.h).
//
// The engine reports each step (StepObserver) and each request once, when it leaves
// (RequestRecorder); a request's output tokens after its first come at ends of steps of the
// replica it left from, between its first and last token. StepEnds keeps each replica's step
// ends (8 bytes a step, appended: no allocation per step once the vector has grown) and, when a
// request leaves, request_gaps takes its token times from them:
//   - the replica ran exactly n - 1 steps in (first token, last token] (n output tokens): the
//     request was in every one, and those are its token times, exactly;
//   - it ran more (a preemption, a disaggregated hand-over, a wait for a seat): the request's
//     n - 1 later tokens are taken as the last n - 1 of those step ends, so that the extra
//     time is one gap after the first token. Exact when the request took part in every step of
//     the replica from its second token on (a hand-over, with no preemption on the decode
//     replica); otherwise the sum, the request's mean and the pooled mean stay exact and the
//     stall is one gap where it may have been several.
// A chunked prefill produces no token until its last chunk, so its chunks are inside the TTFT,
// not gaps; other requests' chunks lengthen the steps they share, and so the gaps.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/byte_io.h"
#include "core/grow_array.h"
#include "core/quantiles.h"
#include "core/request.h"
#include "sim/step_observer.h"

namespace servesim {

/// Each replica's step ends, in ns, increasing. Bounded (MetricsRecorder): a replica keeps at
/// least its last kv_capacity_tokens + k_slack ends (a request has fewer output tokens than its
/// replica holds KV tokens), in at most twice that. Unbounded (TokenTimes): every end.
class StepEnds {
 public:
  static constexpr size_t k_slack = 4096;
  /// A bounded replica's first room, in ends (at most its bound): the size from which GrowArray
  /// maps its own pages and grows by moving them (core/grow_array.h's k_map_bytes, 64 KiB).
  static constexpr size_t k_first_room = GrowArray<int64_t>::k_map_bytes / sizeof(int64_t);
  explicit StepEnds(bool bounded) : m_bounded(bounded) {}

  /// `kv_capacity_tokens`: the replica's (StepRecord), for the bound.
  void add(uint32_t replica, int64_t end_ns, int64_t kv_capacity_tokens) {
    if (replica >= m_ends.size()) {
      m_ends.resize(replica + 1);
      m_trimmed.resize(replica + 1, false);
    }
    GrowArray<int64_t>& e = m_ends[replica];
    if (m_bounded) {
      const size_t keep = static_cast<size_t>(std::max<int64_t>(kv_capacity_tokens, 1)) + k_slack;
      // Room at once for the most it holds, or for a block GrowArray maps itself (whose later
      // growth moves pages, not values): no copy through realloc's smaller blocks on the way.
      if (e.capacity() == 0) e.reserve(std::min(2 * keep, k_first_room));
      if (e.size() >= 2 * keep) {
        e.erase_front(e.size() - keep);
        m_trimmed[replica] = true;
      }
    }
    e.push_back(end_ns);
  }
  /// add() when it drops nothing and the replica has ends already (the common case, inline);
  /// false, adding nothing, otherwise.
  bool add_if_room(uint32_t replica, int64_t end_ns, int64_t kv_capacity_tokens) {
    return sink(replica, kv_capacity_tokens).add(end_ns);
  }
  /// Where add_if_room appends replica `replica`'s ends and how many it holds before add()
  /// drops some (none before the replica's first end): valid until an add() for a replica not
  /// seen yet.
  [[nodiscard]] StepEndSink sink(uint32_t replica, int64_t kv_capacity_tokens) {
    if (replica >= m_ends.size()) return {};
    return {&m_ends[replica],
            m_bounded
                ? 2 * (static_cast<size_t>(std::max<int64_t>(kv_capacity_tokens, 1)) + k_slack)
                : SIZE_MAX};
  }
  /// How many of replica `replica`'s oldest ends add() with this capacity would drop now.
  [[nodiscard]] size_t due_to_drop(uint32_t replica, int64_t kv_capacity_tokens) const {
    if (!m_bounded || replica >= m_ends.size()) return 0;
    const size_t keep = static_cast<size_t>(std::max<int64_t>(kv_capacity_tokens, 1)) + k_slack;
    const size_t n = m_ends[replica].size();
    return n >= 2 * keep ? n - keep : 0;
  }
  /// The number of replicas with ends.
  [[nodiscard]] size_t replicas() const { return m_ends.size(); }
  /// Replica `r`'s ends (empty when it ran no step).
  [[nodiscard]] const GrowArray<int64_t>& of(uint32_t r) const {
    return r < m_ends.size() ? m_ends[r] : s_none;
  }
  /// Whether replica `r` dropped its oldest ends (bounded only).
  [[nodiscard]] bool trimmed(uint32_t r) const { return r < m_trimmed.size() && m_trimmed[r]; }

 private:
  // of() for a replica without ends: a class member, not a function's static, whose first-use
  // guard would be tested on every call.
  static inline const GrowArray<int64_t> s_none;
  bool m_bounded;
  std::vector<GrowArray<int64_t>> m_ends;  // grown by realloc (core/grow_array.h)
  std::vector<bool> m_trimmed;
};

/// How request_gaps found a request's gaps.
enum class GapsFrom : uint8_t {
  none,          ///< fewer than two output tokens, or not finished: no gap
  steps,         ///< its replica's steps, one per token: exact
  stall_placed,  ///< more steps than gaps: the stall is the gap after the first token
  mean,          ///< its steps are not kept: n - 1 gaps of its mean (TPOT); the sum is exact
};

/// A finished request's n - 1 gaps as request_gaps finds them: from its replica's step ends
/// (`at`, `count` of them: the gaps are at[0] - t0, at[1] - at[0], ..., in ns) or, from ==
/// GapsFrom::mean, `count` gaps of `mean` seconds.
struct GapRun {
  GapsFrom from = GapsFrom::none;
  const int64_t* at = nullptr;
  int64_t t0 = 0;
  int64_t count = 0;
  double mean = 0;
  int64_t span_ns = 0;  ///< GapsFrom::mean: first token to last, the gaps' exact sum
};

/// How finished request `r`'s gaps are found (see the top of this file). Inline in its callers
/// (the summary recorder calls it once a request): the GapRun stays in registers.
[[gnu::always_inline]] inline GapRun request_gap_run(const StepEnds& ends, const Request& r) {
  const int32_t n = r.spec.output_tokens;
  if (r.state != RequestState::Released || n <= 1) return {};
  const int64_t t0 = r.first_token.count_ns(), t1 = r.last_token.count_ns();
  const GrowArray<int64_t>& e = ends.of(r.replica);
  // The first end past t1, then the first past t0 (upper bounds). A request is recorded as it
  // leaves, so its last token is mostly the replica's last end: searched back from the end,
  // doubling the stride. Its first is then mostly the end n steps before (one step a token):
  // taken where the ends say so, else searched.
  const int64_t* const b = e.begin();
  const int64_t* hi = e.end();
  for (ptrdiff_t stride = 1; hi != b && *(hi - 1) > t1; stride *= 2) {
    const int64_t* const from = hi - std::min<ptrdiff_t>(stride, hi - b);
    if (!(*from > t1)) {
      hi = std::upper_bound(from, hi, t1);
      break;
    }
    hi = from;
  }
  const int64_t* const lo = hi - b >= n && *(hi - n) == t0 && *(hi - n + 1) > t0
                                ? hi - n + 1
                                : std::upper_bound(b, hi, t0);
  const int64_t steps = hi - lo;  // step ends in (t0, t1] that are kept
  if (steps >= n - 1 && hi != lo && *(hi - 1) == t1) {
    const auto first = hi - (n - 1);
    // Trimmed ends before lo may have been in (t0, t1] too.
    const bool more = steps > n - 1 || (lo == e.begin() && ends.trimmed(r.replica));
    return {more ? GapsFrom::stall_placed : GapsFrom::steps, e.data() + (first - e.begin()), t0,
            n - 1, 0};
  }
  // Not kept (a bounded StepEnds trimmed them), or no steps were observed (summarize()).
  return {GapsFrom::mean,
          nullptr,
          0,
          n - 1,
          (r.last_token - r.first_token).seconds() / (n - 1),
          (r.last_token - r.first_token).count_ns()};
}

/// Calls gap(seconds, index) for each of the n - 1 gaps of finished request `r`, in order:
/// `index` is the step's position in ends.of(r.replica), or -1 for a mean gap.
template <class F>
GapsFrom request_gaps(const StepEnds& ends, const Request& r, F&& gap) {
  const GapRun g = request_gap_run(ends, r);
  if (g.from == GapsFrom::mean) {
    for (int64_t k = 0; k < g.count; ++k) gap(g.mean, -1);
  } else if (g.from != GapsFrom::none) {
    const int64_t* e = ends.of(r.replica).data();
    int64_t prev = g.t0;
    for (int64_t k = 0; k < g.count; ++k) {
      gap(static_cast<double>(g.at[k] - prev) * 1e-9, (g.at + k) - e);
      prev = g.at[k];
    }
  }
  return g.from;
}

/// A stream of gaps: QuantileSketch's count, max and percentiles, and the mean and population
/// standard deviation from exact sums in whole nanoseconds (a step gap is a whole number of
/// them): the sums do not depend on the order the gaps come in, so the engine may count a
/// step's gap once for every sequence that decoded in it (add_ns with a count) and a cluster's
/// parts fold in any order, with the same figures to the bit. A mean gap (GapsFrom::mean,
/// not whole nanoseconds) adds its request's span exactly to the sum and its squares rounded
/// to a whole ns^2. q's own double sum (q.sum(), q.mean()) is not these figures and misses the
/// step gaps counted past the exact limit (bucket_step_gaps): read mean() and std().
struct GapSketch {
  explicit GapSketch(size_t exact_limit) : q(exact_limit) {}

  __extension__ typedef __int128 Wide;  // sums of squares of ns: past int64 in long runs

  /// A gap of `ns` nanoseconds, `count` times.
  void add_ns(int64_t ns, int64_t count = 1) {
    const double v = static_cast<double>(ns) * 1e-9;
    if (count == 1)
      q.add(v);
    else
      q.add_repeated(v, count);
    m_sum_ns += static_cast<Wide>(ns) * count;
    m_squares += static_cast<Wide>(ns) * ns * count;
  }
  /// Each gap of `g` (request_gap_run). Returns the largest of them (0 without any).
  double add_run(const GapRun& g) {
    if (g.from == GapsFrom::none || g.count <= 0) return 0;
    if (g.from == GapsFrom::mean) {
      // Its span is the exact sum of its gaps; each square is the span's over count^2.
      const auto span = static_cast<Wide>(g.span_ns);
      q.add_repeated(g.mean, g.count);
      m_sum_ns += span;
      m_squares += (2 * span * span + g.count) / (2 * static_cast<Wide>(g.count));
      return g.mean;
    }
    StepGaps gaps{g.at, g.t0, 0, 0};
    const double largest = q.add_each(static_cast<size_t>(g.count), gaps, [](double) {});
    m_sum_ns += gaps.sum;
    m_squares += gaps.squares;
    return largest;
  }
  /// The gaps of steps [1, n) of `ends` (ns, increasing), step i's (ends[i] - ends[i - 1]) as
  /// many times as the prefix sum of `counts` up to i (never negative): add_ns for each, in one
  /// loop, but for their sum, which the caller adds with add_step_sum_ns (a run of consecutive
  /// steps' gaps sums to the run's span: once a run, not once a step). `total`: the sum of
  /// those prefix sums over [1, n) (the gaps to add) when the caller knows it, else negative
  /// (then counted here, if the sketch is still exact).
  /// Returns the sum of counts[0, n) (0 when n is 0).
  int64_t add_step_gaps(const int64_t* ends, const int32_t* counts, size_t n, int64_t total = -1) {
    if (n < 2) return n == 1 ? counts[0] : 0;
    if (q.exact()) {
      // How many gaps in all: past the exact limit they go straight into the histogram
      // (QuantileSketch::expect).
      if (total < 0) {
        int64_t open = counts[0];
        total = 0;
        for (size_t i = 1; i < n; ++i) {
          open += counts[i];
          total += open;
        }
      }
      q.expect(total);
    }
    if (!q.exact()) return bucket_step_gaps(ends, counts, n);
    CountedGaps gaps{ends + 1, counts + 1, ends[0], counts[0], 0};
    q.add_repeated_each(n - 1, gaps);
    m_squares += gaps.squares;
    return gaps.open;
  }
  /// The sum of step gaps that add_step_gaps counts (or will), in ns.
  void add_step_sum_ns(Wide ns) { m_sum_ns += ns; }
  /// Calls f(k, v) for each gap of `g`, k = 0, 1, ...: request_gaps' gaps.
  template <class F>
  static void each_gap(const GapRun& g, F&& f) {
    if (g.from == GapsFrom::mean) {
      for (int64_t k = 0; k < g.count; ++k) f(static_cast<size_t>(k), g.mean);
    } else if (g.from != GapsFrom::none) {
      int64_t prev = g.t0;
      for (int64_t k = 0; k < g.count; ++k) {
        f(static_cast<size_t>(k), static_cast<double>(g.at[k] - prev) * 1e-9);
        prev = g.at[k];
      }
    }
  }
  /// The mean gap, in seconds (0 without any).
  [[nodiscard]] double mean() const {
    if (q.count() == 0) return 0.0;
    return static_cast<double>(static_cast<long double>(m_sum_ns) /
                               static_cast<long double>(q.count())) *
           1e-9;
  }
  /// The population standard deviation, in seconds (0 without any gap).
  [[nodiscard]] double std() const {
    if (q.count() == 0) return 0.0;
    const auto n = static_cast<long double>(q.count());
    const long double mean = static_cast<long double>(m_sum_ns) / n;
    const long double var = static_cast<long double>(m_squares) / n - mean * mean;
    return static_cast<double>(std::sqrt(std::max(0.0L, var))) * 1e-9;
  }

  /// The exact sums behind mean() and std(): of n gaps, in ns and ns^2.
  struct Moments {
    int64_t n = 0;
    Wide sum_ns = 0, squares = 0;
  };
  [[nodiscard]] Moments moments() const { return {q.count(), m_sum_ns, m_squares}; }
  /// `a` and `b` together: exact, so folding parts in any order gives one result.
  [[nodiscard]] static Moments fold(Moments a, const Moments& b) {
    a.n += b.n;
    a.sum_ns += b.sum_ns;
    a.squares += b.squares;
    return a;
  }
  /// Takes `m`'s sums (of as many values as q holds): mean() and std() are then theirs.
  void set_moments(const Moments& m) {
    m_sum_ns = m.sum_ns;
    m_squares = m.squares;
  }

  /// To bytes and back (QuantileSketch::save, load): the parallel engine's MPI ranks.
  void save(std::string& out) const {
    q.save(out);
    put_bytes(out, m_sum_ns);  // each field alone: Moments has padding
    put_bytes(out, m_squares);
  }
  void load(ByteReader& in) {
    q.load(in);
    m_sum_ns = in.get<Wide>();
    m_squares = in.get<Wide>();
  }

  QuantileSketch q;

 private:
  /// The gaps of a GapRun from step ends, in turn, summed exactly as they are made.
  struct StepGaps {
    const int64_t* at;
    int64_t prev;
    Wide sum, squares;
    double operator()() {
      const int64_t e = *at++;
      const int64_t ns = e - prev;
      prev = e;
      sum += ns;
      squares += static_cast<Wide>(ns) * ns;
      return static_cast<double>(ns) * 1e-9;
    }
  };

  /// add_step_gaps past the exact limit: each step's gap into its bucket with its count, in a
  /// loop of its own. The gaps are whole nanoseconds, at least 0 and below 2^63, so their
  /// extremes are taken on the integers (ns * 1e-9 is monotone: the least ns gives the least
  /// value, to the bit), the bucket needs no upper clamp (only a zero gap needs raising to the
  /// least bucket's floor), and the squares' sum is unsigned (no sign to extend). q's own double
  /// sum (q.sum(), q.mean()) does not take these gaps: mean() and std() are from the exact sums.
  int64_t bucket_step_gaps(const int64_t* ends, const int32_t* counts, size_t n) {
    __extension__ typedef unsigned __int128 UWide;
    int64_t* const buckets = q.histogram();
    int64_t open = counts[0], added = 0;
    int64_t lo = INT64_MAX, hi = 0;
    UWide squares = 0;
    for (size_t i = 1; i < n; ++i) {
      open += counts[i];
      if (open == 0) continue;
      const int64_t ns = ends[i] - ends[i - 1];  // read again: fewer moves than carrying it
      lo = ns < lo ? ns : lo;
      hi = hi < ns ? ns : hi;
      int64_t w;
      if (__builtin_mul_overflow(ns, open, &w)) [[unlikely]]
        m_squares += static_cast<Wide>(ns) * ns * open;
      else
        squares += static_cast<UWide>(static_cast<uint64_t>(ns)) * static_cast<uint64_t>(w);
      buckets[QuantileSketch::bucket_in_range(raised(static_cast<double>(ns) * 1e-9))] += open;
      added += open;
    }
    if (added > 0)
      q.added_to_histogram(added, static_cast<double>(lo) * 1e-9, static_cast<double>(hi) * 1e-9);
    m_squares += static_cast<Wide>(squares);
    return open;
  }

  /// `v` (add_ns's value of a gap), or k_bucket_floor where smaller (a zero gap): one maxsd
  /// where GCC would otherwise branch to a bucket address of its own for the floor.
  static double raised(double v) {
#if defined(__SSE2__)
    return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(v), _mm_set_sd(QuantileSketch::k_bucket_floor)));
#else
    return v < QuantileSketch::k_bucket_floor ? QuantileSketch::k_bucket_floor : v;
#endif
  }

  /// Step gaps with their counts, in turn (add_step_gaps), their squares summed.
  /// ns * open is mostly well inside 64 bits (a step of 20 ms with 100 sequences decoding is
  /// 2e9): then the square's product is one 64 x 64 -> 128-bit multiply of ns and that product
  /// instead of a 128 x 64-bit one, with the same bits (both exact below 2^127).
  struct CountedGaps {
    const int64_t* at;
    const int32_t* counts;
    int64_t prev;  // the end before *at
    int64_t open;
    Wide squares;
    QuantileSketch::Repeat operator()() {
      open += *counts++;
      const int64_t e = *at++;
      const int64_t ns = e - prev;
      prev = e;
      int64_t w;
      if (__builtin_mul_overflow(ns, open, &w)) [[unlikely]]
        squares += static_cast<Wide>(ns) * ns * open;
      else
        squares += static_cast<Wide>(ns) * w;
      return {static_cast<double>(ns) * 1e-9, open};
    }
  };

  Wide m_sum_ns = 0, m_squares = 0;
};

}  // namespace servesim
