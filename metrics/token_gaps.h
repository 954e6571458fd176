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

#include "core/byte_io.h"
#include "core/quantiles.h"
#include "core/request.h"

namespace servesim {

/// Each replica's step ends, in ns, increasing. Bounded (MetricsRecorder): a replica keeps at
/// least its last kv_capacity_tokens + k_slack ends (a request has fewer output tokens than its
/// replica holds KV tokens), in at most twice that. Unbounded (TokenTimes): every end.
class StepEnds {
 public:
  static constexpr size_t k_slack = 4096;
  explicit StepEnds(bool bounded) : m_bounded(bounded) {}

  /// `kv_capacity_tokens`: the replica's (StepRecord), for the bound.
  void add(uint32_t replica, int64_t end_ns, int64_t kv_capacity_tokens) {
    if (replica >= m_ends.size()) {
      m_ends.resize(replica + 1);
      m_trimmed.resize(replica + 1, false);
    }
    std::vector<int64_t>& e = m_ends[replica];
    if (m_bounded) {
      const size_t keep = static_cast<size_t>(std::max<int64_t>(kv_capacity_tokens, 1)) + k_slack;
      if (e.size() >= 2 * keep) {
        e.erase(e.begin(), e.end() - static_cast<std::ptrdiff_t>(keep));
        m_trimmed[replica] = true;
      }
    }
    e.push_back(end_ns);
  }
  /// Replica `r`'s ends (empty when it ran no step).
  [[nodiscard]] const std::vector<int64_t>& of(uint32_t r) const {
    static const std::vector<int64_t> none;
    return r < m_ends.size() ? m_ends[r] : none;
  }
  /// Whether replica `r` dropped its oldest ends (bounded only).
  [[nodiscard]] bool trimmed(uint32_t r) const { return r < m_trimmed.size() && m_trimmed[r]; }

 private:
  bool m_bounded;
  std::vector<std::vector<int64_t>> m_ends;
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
};

/// How finished request `r`'s gaps are found (see the top of this file).
inline GapRun request_gap_run(const StepEnds& ends, const Request& r) {
  const int32_t n = r.spec.output_tokens;
  if (r.state != RequestState::Released || n <= 1) return {};
  const int64_t t0 = r.first_token.count_ns(), t1 = r.last_token.count_ns();
  const std::vector<int64_t>& e = ends.of(r.replica);
  const auto lo = std::upper_bound(e.begin(), e.end(), t0);
  const auto hi = std::upper_bound(lo, e.end(), t1);
  const int64_t steps = hi - lo;  // step ends in (t0, t1] that are kept
  if (steps >= n - 1 && hi != lo && *(hi - 1) == t1) {
    const auto first = hi - (n - 1);
    // Trimmed ends before lo may have been in (t0, t1] too.
    const bool more = steps > n - 1 || (lo == e.begin() && ends.trimmed(r.replica));
    return {more ? GapsFrom::stall_placed : GapsFrom::steps, e.data() + (first - e.begin()), t0,
            n - 1, 0};
  }
  // Not kept (a bounded StepEnds trimmed them), or no steps were observed (summarize()).
  return {GapsFrom::mean, nullptr, 0, n - 1, (r.last_token - r.first_token).seconds() / (n - 1)};
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

/// A stream of gaps: QuantileSketch's count, mean, max and percentiles, and the population
/// standard deviation from sums shifted by the first gap (no division per gap; the shift keeps
/// the sums small, so the std agrees with numpy's two-pass one to many digits).
struct GapSketch {
  explicit GapSketch(size_t exact_limit) : q(exact_limit) {}
  void add(double v) {
    if (q.count() == 0) m_shift = v;
    q.add(v);
    const double d = v - m_shift;
    m_sum += d;
    m_squares += d * d;
  }
  /// add(v) for each of `vs`, in order: the same sums to the bit.
  void add_all(std::span<const double> vs) {
    if (vs.empty()) return;
    (void)add_each(vs.size(), Stored{vs.data()});
  }
  /// add(v) for each gap of `g` (request_gap_run), made as they are taken, calling seen(v) on
  /// each: add_all of request_gaps' gaps, to the bit, without storing them first.
  /// Returns the largest of these gaps (0 without any).
  double add_run(const GapRun& g) {
    if (g.from == GapsFrom::none || g.count <= 0) return 0;
    if (g.from == GapsFrom::mean) return add_each(static_cast<size_t>(g.count), Repeat{g.mean});
    return add_each(static_cast<size_t>(g.count), StepGaps{g.at, g.t0});
  }
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
  [[nodiscard]] double std() const {
    if (q.count() == 0) return 0.0;
    const auto n = static_cast<double>(q.count());
    const double mean = m_sum / n;
    return std::sqrt(std::max(0.0, m_squares / n - mean * mean));
  }

  /// The sums behind std(): of (v - shift) and its squares over n values.
  struct Moments {
    int64_t n = 0;
    double shift = 0, sum = 0, squares = 0;
  };
  [[nodiscard]] Moments moments() const { return {q.count(), m_shift, m_sum, m_squares}; }
  /// Folds `b`'s sums into `a`'s, shifted to a's shift (b's when a has none): the same
  /// whatever computed them, so folding parts in a fixed order gives one result.
  [[nodiscard]] static Moments fold(Moments a, const Moments& b) {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const double d = b.shift - a.shift;
    const auto n = static_cast<double>(b.n);
    a.sum += b.sum + n * d;
    a.squares += b.squares + 2 * d * b.sum + n * d * d;
    a.n += b.n;
    return a;
  }
  /// Takes `m`'s sums (of as many values as q holds): std() is then theirs.
  void set_moments(const Moments& m) {
    m_shift = m.shift;
    m_sum = m.sum;
    m_squares = m.squares;
  }

  /// To bytes and back (QuantileSketch::save, load): the parallel engine's MPI ranks.
  void save(std::string& out) const {
    q.save(out);
    put_bytes(out, moments());
  }
  void load(ByteReader& in) {
    q.load(in);
    set_moments(in.get<Moments>());
  }

  QuantileSketch q;

 private:
  /// The gaps of a GapRun from step ends, in turn.
  struct StepGaps {
    const int64_t* at;
    int64_t prev;
    double operator()() {
      const int64_t e = *at++;
      const double v = static_cast<double>(e - prev) * 1e-9;
      prev = e;
      return v;
    }
  };
  /// One value, again and again (a mean gap).
  struct Repeat {
    double v;
    double operator()() const { return v; }
  };
  /// Each stored value in turn.
  struct Stored {
    const double* at;
    double operator()() { return *at++; }
  };
  /// The moments' running sums, of values less `shift`.
  struct Sums {
    double shift, sum, squares;
    void operator()(double v) {
      const double d = v - shift;
      sum += d;
      squares += d * d;
    }
  };
  /// add(v) for n values from next(), in one loop with the moments (QuantileSketch::add_each).
  /// Returns the largest of them.
  template <class Next>
  double add_each(size_t n, Next next) {
    Sums sums{m_shift, m_sum, m_squares};
    double largest = 0;
    if (q.count() == 0 && n > 0) {  // the shift is the first value of all
      const double v0 = next();
      sums.shift = v0;
      largest = q.add_each(1, Repeat{v0}, sums);
      --n;
    }
    largest = std::max(largest, q.add_each(n, next, sums));
    m_shift = sums.shift;
    m_sum = sums.sum;
    m_squares = sums.squares;
    return largest;
  }

  double m_shift = 0, m_sum = 0, m_squares = 0;
};

}  // namespace servesim
