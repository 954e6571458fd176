#include "core/quantiles.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/order_stats.h"
#include "core/radix_sort.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace servesim {
namespace {

// Chunks start small (a sketch of a few values costs little) and double up to 2 MiB.
constexpr size_t k_first_chunk = 256;
constexpr size_t k_largest_chunk = size_t{1} << 18;

constexpr size_t k_huge_page = size_t{1} << 21;

}  // namespace

QuantileSketch::Chunk QuantileSketch::make_chunk(size_t cap) {
  const size_t bytes = cap * sizeof(double);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= k_huge_page) {
    // Map one huge page more than needed and unmap the unaligned ends.
    const size_t span = (bytes + k_huge_page - 1) / k_huge_page * k_huge_page;
    void* raw = mmap(nullptr, span + k_huge_page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw != MAP_FAILED) {
      const auto base = reinterpret_cast<uintptr_t>(raw);
      const uintptr_t at = (base + k_huge_page - 1) & ~(k_huge_page - 1);
      if (at > base) munmap(raw, at - base);
      if (base + k_huge_page > at)
        munmap(reinterpret_cast<void*>(at + span), base + k_huge_page - at);
      madvise(reinterpret_cast<void*>(at), span, MADV_HUGEPAGE);  // a hint: fine if refused
      return Chunk{
          std::unique_ptr<double[], ValuesFree>(reinterpret_cast<double*>(at), ValuesFree{span}), 0,
          cap};
    }
  }  // else (no room to map): new[] below, which throws std::bad_alloc as a vector would
#endif
  return Chunk{std::unique_ptr<double[], ValuesFree>(new double[cap], ValuesFree{0}), 0, cap};
}

void QuantileSketch::ValuesFree::operator()(double* p) const {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes != 0) {
    munmap(p, bytes);
    return;
  }
#endif
  delete[] p;
}

QuantileSketch::QuantileSketch(const QuantileSketch& o)
    : m_limit(o.m_limit),
      m_count(o.m_count),
      m_sum(o.m_sum),
      m_min(o.m_min),
      m_max(o.m_max),
      m_last(o.m_last),
      m_sorted(o.m_sorted),
      m_histogram_mode(o.m_histogram_mode),
      m_buckets(o.m_buckets),
      m_runs(o.m_runs),
      m_run_values(o.m_run_values),
      m_runs_sorted(o.m_runs_sorted) {
  // One chunk holding every kept value, full: the next add starts a new one.
  const auto n = static_cast<size_t>(m_histogram_mode ? 0 : plain_count());
  if (n == 0) return;
  Chunk c = make_chunk(n);
  c.n = n;
  size_t at = 0;
  for (const Chunk& oc : o.m_chunks) {
    const size_t k = &oc == &o.m_chunks.back() ? o.m_tail_n : oc.n;
    std::copy_n(oc.v.get(), k, c.v.get() + at);
    at += k;
  }
  m_chunks.push_back(std::move(c));
  m_tail = m_chunks.back().v.get();
  m_tail_n = m_tail_cap = n;
}

QuantileSketch& QuantileSketch::operator=(const QuantileSketch& o) {
  if (this != &o) *this = QuantileSketch(o);
  return *this;
}

QuantileSketch::QuantileSketch(QuantileSketch&& o) noexcept
    : m_limit(o.m_limit),
      m_count(o.m_count),
      m_sum(o.m_sum),
      m_min(o.m_min),
      m_max(o.m_max),
      m_last(o.m_last),
      m_chunks(std::move(o.m_chunks)),
      m_tail(std::exchange(o.m_tail, nullptr)),
      m_tail_n(std::exchange(o.m_tail_n, 0)),
      m_tail_cap(std::exchange(o.m_tail_cap, 0)),
      m_sorted(o.m_sorted),
      m_histogram_mode(o.m_histogram_mode),
      m_buckets(std::move(o.m_buckets)),
      m_runs(std::move(o.m_runs)),
      m_run_values(std::exchange(o.m_run_values, 0)),
      m_runs_sorted(o.m_runs_sorted) {
  o.m_chunks.clear();
  o.m_runs.clear();
  o.m_count = 0;
  o.m_last = 0;  // add(): 0 while no value is kept
  o.forget_ranks();
}

QuantileSketch& QuantileSketch::operator=(QuantileSketch&& o) noexcept {
  if (this == &o) return *this;
  m_limit = o.m_limit;
  m_count = std::exchange(o.m_count, 0);
  m_sum = o.m_sum;
  m_min = o.m_min;
  m_max = o.m_max;
  m_last = o.m_last;
  m_chunks = std::move(o.m_chunks);
  o.m_chunks.clear();
  m_tail = std::exchange(o.m_tail, nullptr);
  m_tail_n = std::exchange(o.m_tail_n, 0);
  m_tail_cap = std::exchange(o.m_tail_cap, 0);
  m_sorted = o.m_sorted;
  m_histogram_mode = o.m_histogram_mode;
  m_buckets = std::move(o.m_buckets);
  m_runs = std::move(o.m_runs);
  o.m_runs.clear();
  m_run_values = std::exchange(o.m_run_values, 0);
  m_runs_sorted = o.m_runs_sorted;
  o.m_last = 0;
  forget_ranks();
  o.forget_ranks();
  return *this;
}

void QuantileSketch::add_all(std::span<const double> vs) {
  struct Stored {
    const double* at;
    double operator()() { return *at++; }
  };
  (void)add_each(vs.size(), Stored{vs.data()}, [](double) {});
}

void QuantileSketch::add_repeated(double v, int64_t count) {
  if (count <= 0) return;
  if (m_count == 0) {
    m_min = m_max = v;
  } else {
    m_min = v < m_min ? v : m_min;
    m_max = m_max < v ? v : m_max;
  }
  m_count += count;
  m_sum += v * static_cast<double>(count);
  if (m_histogram_mode) {
    m_buckets[bucket_of(v)] += count;
    return;
  }
  if (!m_runs.empty() && v < m_runs.back().v) m_runs_sorted = false;
  m_runs.push_back({v, count});
  m_run_values += count;
  if (static_cast<size_t>(m_count) > m_limit) to_histogram();
}

void QuantileSketch::keep_in_new_chunk(double v) {
  new_chunk();
  m_tail[m_tail_n++] = v;
  if (static_cast<size_t>(m_count) > m_limit) to_histogram();
}

void QuantileSketch::new_chunk() {
  if (!m_chunks.empty()) m_chunks.back().n = m_tail_n;
  // Never more than the limit needs: the value past it moves everything to the histogram.
  const auto kept = static_cast<size_t>(m_count - 1);  // before the value being added
  size_t cap = std::clamp(kept, k_first_chunk, k_largest_chunk);
  if (m_limit - kept < cap) cap = m_limit - kept + 1;
  Chunk c = make_chunk(cap);
  m_tail = c.v.get();
  m_tail_n = 0;
  m_tail_cap = cap;
  m_chunks.push_back(std::move(c));
}

void QuantileSketch::gather() {
  if (m_chunks.empty()) return;
  m_chunks.back().n = m_tail_n;
  if (m_chunks.size() == 1) return;
  const auto n = static_cast<size_t>(plain_count());
  Chunk all = make_chunk(n);
  all.n = n;
  size_t at = 0;
  for (Chunk& c : m_chunks) {
    std::copy_n(c.v.get(), c.n, all.v.get() + at);
    at += c.n;
    c.v.reset();
  }
  m_chunks.clear();
  m_chunks.push_back(std::move(all));
  m_tail = m_chunks.back().v.get();
  m_tail_n = m_tail_cap = n;
}

void QuantileSketch::to_histogram() {
  m_histogram_mode = true;
  if (m_buckets.capacity() == 0)
    m_buckets.resize(k_buckets);  // zeros from untouched pages: only the buckets counted fault
  else
    m_buckets.assign(k_buckets, 0);
  if (!m_chunks.empty()) m_chunks.back().n = m_tail_n;
  int64_t* buckets = m_buckets.data();
  for (const Chunk& c : m_chunks) {
    const double* v = c.v.get();
    const size_t n = c.n;
    for (size_t i = 0; i < n; ++i) ++buckets[bucket_of(v[i])];
  }
  for (const Run& r : m_runs) buckets[bucket_of(r.v)] += r.n;
  std::vector<Run>().swap(m_runs);
  m_run_values = 0;
  m_runs_sorted = true;
  std::vector<Chunk>().swap(m_chunks);
  m_tail = nullptr;
  m_tail_n = m_tail_cap = 0;
}

void QuantileSketch::merge(const QuantileSketch& o) {
  if (o.m_count == 0) return;
  if (m_count == 0) {
    m_min = o.m_min;
    m_max = o.m_max;
  } else {
    m_min = std::min(m_min, o.m_min);
    m_max = std::max(m_max, o.m_max);
  }
  const double sum = m_sum + o.m_sum;
  if (o.m_histogram_mode) {
    if (!m_histogram_mode) to_histogram();
    for (size_t b = 0; b < k_buckets; ++b) m_buckets[b] += o.m_buckets[b];
    m_count += o.m_count;
  } else {
    // o's kept values, chunk by chunk, as add_all would take them (past the limit, into the
    // histogram); the sum is set below.
    for (const Chunk& c : o.m_chunks) {
      const size_t k = &c == &o.m_chunks.back() ? o.m_tail_n : c.n;
      add_all(std::span<const double>(c.v.get(), k));
    }
    for (const Run& r : o.m_runs) add_repeated(r.v, r.n);
  }
  m_sum = sum;
}

double QuantileSketch::bucket_mid(size_t b) const {
  const int e = static_cast<int>(b / k_per_exp) + 1 + k_min_exp;
  const double sub = static_cast<double>(b % k_per_exp);
  const double lo = std::ldexp(0.5 + sub / (2.0 * static_cast<double>(k_per_exp)), e);
  const double hi = std::ldexp(0.5 + (sub + 1) / (2.0 * static_cast<double>(k_per_exp)), e);
  return std::clamp(0.5 * (lo + hi), m_min, m_max);
}

double QuantileSketch::order_statistic(int64_t k) const {
  if (k <= 0) return m_min;
  if (k >= m_count - 1) return m_max;
  // Every value lies in [m_min, m_max], so the buckets outside theirs are 0: not read (nor
  // their pages touched).
  int64_t seen = 0;
  for (size_t b = bucket_of(m_min), last = bucket_of(m_max); b <= last; ++b) {
    seen += m_buckets[b];
    if (seen > k) return bucket_mid(b);
  }
  return m_max;
}

QuantileSketch::Ranks QuantileSketch::ranks_of(double p) const {
  const double pos = p / 100.0 * static_cast<double>(m_count - 1);
  const auto lo = static_cast<int64_t>(std::floor(pos));
  return {lo, std::min(lo + 1, m_count - 1), pos - static_cast<double>(lo)};
}

void QuantileSketch::percentiles(std::span<const double> p, std::span<double> out) {
  constexpr size_t k_most = 64;
  if (m_count > 0 && !m_histogram_mode && m_runs.empty() && !m_sorted && p.size() <= k_most &&
      m_count < (int64_t{1} << 32)) {
    // The chunks as they are: the two passes read them in place (no gather() copy).
    if (!m_chunks.empty()) m_chunks.back().n = m_tail_n;
    std::vector<std::span<const double>> parts;
    parts.reserve(m_chunks.size());
    for (const Chunk& c : m_chunks) parts.emplace_back(c.v.get(), c.n);
    std::array<size_t, 2 * k_most> ks{};
    std::array<double, 2 * k_most> at{};
    std::array<double, k_most> frac{};
    for (size_t i = 0; i < p.size(); ++i) {
      const Ranks r = ranks_of(p[i]);
      ks[2 * i] = static_cast<size_t>(r.lo);
      ks[2 * i + 1] = static_cast<size_t>(r.hi);
      frac[i] = r.frac;
    }
    const size_t n = 2 * p.size();
    if (select_ranks_by_bits(parts, m_min, m_max, std::span<const size_t>(ks.data(), n),
                             std::span<double>(at.data(), n))) {
      for (size_t i = 0; i < p.size(); ++i) {
        const double a = at[2 * i], b = at[2 * i + 1];
        out[i] = a + frac[i] * (b - a);
      }
      return;
    }
  }
  for (size_t i = 0; i < p.size(); ++i) out[i] = percentile(p[i]);
}

double QuantileSketch::percentile(double p) {
  if (m_count == 0) return 0.0;
  const auto [lo, hi, frac] = ranks_of(p);
  double a = 0, b = 0;
  if (m_histogram_mode) {
    a = order_statistic(lo);
    b = order_statistic(hi);
  } else if (m_runs.empty()) {
    gather();
    double* v = m_chunks.front().v.get();
    if (m_sorted) {
      a = v[lo];
      b = v[hi];
    } else {
      if (m_placed_at != m_count) {
        m_placed.clear();
        m_placed_at = m_count;
      }
      const auto n = static_cast<size_t>(m_count);
      a = select_rank(v, n, static_cast<size_t>(lo), m_placed);
      b = select_rank(v, n, static_cast<size_t>(hi), m_placed);
    }
  } else {
    a = exact_order_statistic(lo);
    b = exact_order_statistic(hi);
  }
  return a + frac * (b - a);
}

void QuantileSketch::sort_plain() {
  const int64_t plain = plain_count();
  if (plain == 0 || m_sorted) return;
  gather();
  double* kept = m_chunks.front().v.get();
  std::sort(kept, kept + plain);
  m_sorted = true;
  m_last = kept[plain - 1];
}

void QuantileSketch::sort_runs() {
  if (m_runs_sorted) return;
  // By value (exact_order_statistic's walk reads values and counts only, so runs of equal
  // values may come in any order). Values are >= 0, so their bits order as they do (+ 0.0
  // makes -0.0 +0.0): a long array by radix (core/radix_sort.h: a fleet's replicas each sort
  // tens of thousands of runs, where std::sort's mispredicted compares cost 2-3x the time), a
  // short one by std::sort.
  if (m_runs.size() >= 1024) {
    std::vector<Run> scratch;
    radix_sort(m_runs, scratch, [](const Run& r) { return std::bit_cast<uint64_t>(r.v + 0.0); });
  } else {
    std::sort(m_runs.begin(), m_runs.end(), [](const Run& x, const Run& y) { return x.v < y.v; });
  }
  m_runs_sorted = true;
}

double QuantileSketch::exact_order_statistic(int64_t k) {
  const int64_t plain = plain_count();
  const double* v = nullptr;
  if (plain > 0) {
    sort_plain();
    v = m_chunks.front().v.get();
  }
  sort_runs();
  // Both in increasing order: walk them together, counting each run's values at once.
  int64_t seen = 0, i = 0;
  size_t j = 0;
  while (i < plain || j < m_runs.size()) {
    if (j == m_runs.size() || (i < plain && v[i] <= m_runs[j].v)) {
      if (seen++ == k) return v[i];
      ++i;
    } else {
      seen += m_runs[j].n;
      if (seen > k) return m_runs[j].v;
      ++j;
    }
  }
  return m_max;
}

}  // namespace servesim
