// Inter-token gaps counted a step at a time (MetricsRecorder::count_gaps, metrics/metrics.h).
//
// A finished request's gaps, when its replica's steps are kept, are the gaps between
// consecutive step ends of that replica over a range of its steps (the first may be its own:
// from a first token made elsewhere, or a stall; metrics/token_gaps.h). Every request decoding
// in a step shares that step's gap, so the recorder keeps, per replica, a difference array over
// the step ends (+1 where a request's range starts, -1 past its end) and adds each step's gap
// once with its count (GapSketch::add_step_gaps) when the ends are dropped or the tallies are
// read; the range's gaps sum to its span, added when the request is counted. GapSketch's
// figures do not depend on the order or grouping of its gaps, so this gives the figures of
// adding every gap one by one.
#include <algorithm>
#include <cassert>

#include "metrics/metrics.h"

namespace servesim {

template <bool k_run_only, class F>
[[gnu::always_inline]] inline void MetricsRecorder::each_gap_tally(uint32_t rep, F&& f) {
  f(m_all.itl);
  if (k_run_only || m_replicas.empty()) return;
  const uint32_t i = rep + m_replica_base;
  f(m_replicas[i].itl);
  if (!m_pools.empty()) f(m_pools[m_pool_of[i]].itl);
}

// By value and out of line: the caller's GapRun stays in registers (a reference would keep it
// in memory on every path).
[[gnu::noinline]] void MetricsRecorder::add_mean_gaps(uint32_t rep, GapRun run) {
  each_gap_tally<false>(rep, [&](GapSketch& g) { (void)g.add_run(run); });
}

template <bool k_run_only>
[[gnu::always_inline]] inline void MetricsRecorder::count_gaps(const Request& r,
                                                               const GapRun& run) {
  if (run.from == GapsFrom::none || run.count <= 0) return;
  const uint32_t rep = r.replica;
  if (run.from == GapsFrom::mean) {
    add_mean_gaps(rep, run);
    return;
  }
  const GrowArray<int64_t>& e = m_step_ends.of(rep);
  auto idx = static_cast<size_t>(run.at - e.data());  // its second token's step
  const size_t end = idx + static_cast<size_t>(run.count);
  // Its first gap is the step's own when its first token came at the step before.
  const bool alone = idx == 0 || e[idx - 1] != run.t0;
  const int64_t first = run.at[0] - run.t0;
  idx += alone;
  // The step gaps counted below sum to their steps' span: added now, counted when flushed.
  const int64_t span = idx < end ? e[end - 1] - e[idx - 1] : 0;
  each_gap_tally<k_run_only>(rep, [&](GapSketch& g) {
    if (alone) g.add_ns(first);
    g.add_step_sum_ns(span);
  });
  if (idx >= end) return;
  if (rep >= m_gap_counts.size()) m_gap_counts.resize(rep + 1);
  GapCounts& c = m_gap_counts[rep];
  GrowArray<int32_t>& d = c.diff;
  // Sized with the ends' own room, so that it grows as rarely as they do.
  if (d.size() <= end) d.resize(std::max(end + 1, e.capacity() + 1), 0);
  ++d[idx];
  --d[end];
  c.pending += static_cast<int64_t>(end - idx);
}

GapRun MetricsRecorder::take_gaps(const Request& r, bool count) {
  const GapRun run = request_gap_run(m_step_ends, r);
  if (count) count_gaps<false>(r, run);
  return run;
}

void MetricsRecorder::count_request_gaps(const Request& r) {
  assert(m_replicas.empty());
  count_gaps<true>(r, request_gap_run(m_step_ends, r));
}

void MetricsRecorder::flush_gap_counts(uint32_t rep, size_t end) {
  if (rep >= m_gap_counts.size()) return;
  GapCounts& c = m_gap_counts[rep];
  GrowArray<int32_t>& d = c.diff;
  const GrowArray<int64_t>& e = m_step_ends.of(rep);
  // Every count is at an index below both sizes (count_gaps: a range ends at most one past
  // the last end, and the array is sized past it).
  const size_t all = std::min(d.size(), e.size());
  end = std::min(end, all);
  if (end == 0) return;
  // Index 0 is never a counted gap's step (its previous end is not kept: count_gaps), but what
  // it holds is open there. With every step flushed, the gaps to add are all that are pending.
  const int64_t total = end == all ? c.pending : -1;
  const int64_t before = m_all.itl.q.count();
  int64_t open = 0;  // requests whose gaps span the last step flushed: the counts' sum
  each_gap_tally<false>(
      rep, [&](GapSketch& g) { open = g.add_step_gaps(e.data(), d.data(), end, total); });
  c.pending -= m_all.itl.q.count() - before;
  if (end == all) {
    // No range goes past the last step: what is open there ends at the next index, whose count
    // cancels it, so every count is spent. Emptied rather than zeroed (count_gaps' resize
    // writes the zeros if the run goes on).
    assert(c.pending == 0 && (end == d.size() || d[end] + open == 0));
    d.resize(0);
    return;
  }
  std::fill(d.begin(), d.begin() + end, 0);
  // What is still open carries on from the next step.
  if (open != 0) d[end] += static_cast<int32_t>(open);
}

void MetricsRecorder::flush_all_gap_counts() {
  for (uint32_t rep = 0; rep < m_gap_counts.size(); ++rep)
    flush_gap_counts(rep, m_gap_counts[rep].diff.size());
}

void MetricsRecorder::add_step_end(uint32_t replica, int64_t end_ns, int64_t kv_capacity_tokens) {
  if (const size_t drop = m_step_ends.due_to_drop(replica, kv_capacity_tokens); drop > 0) {
    // The dropped ends' gaps, and the first kept end's (its previous end is dropped), are final:
    // no later request's gaps reach back to them (count_gaps starts a range past index 0).
    if (replica < m_gap_counts.size()) {
      flush_gap_counts(replica, drop + 1);
      GrowArray<int32_t>& d = m_gap_counts[replica].diff;
      d.erase_front(std::min(drop, d.size()));
    }
  }
  m_step_ends.add(replica, end_ns, kv_capacity_tokens);
}

}  // namespace servesim
