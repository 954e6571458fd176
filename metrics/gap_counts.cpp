// Inter-token gaps counted a step at a time (MetricsRecorder::count_gaps, metrics/metrics.h).
//
// A finished request's gaps, when its replica's steps are kept, are the gaps between
// consecutive step ends of that replica over a range of its steps (the first may be its own:
// from a first token made elsewhere, or a stall; metrics/token_gaps.h). Every request decoding
// in a step shares that step's gap, so the recorder keeps, per replica, a difference array over
// the step ends (+1 where a request's range starts, -1 past its end) and adds each step's gap
// once with its count (GapSketch::add_ns) when the ends are dropped or the tallies are read.
// GapSketch's figures do not depend on the order or grouping of its gaps, so this gives the
// figures of adding every gap one by one.
#include <algorithm>

#include "metrics/metrics.h"

namespace servesim {

template <class F>
void MetricsRecorder::each_gap_tally(uint32_t rep, F&& f) {
  f(m_all.itl);
  if (m_replicas.empty()) return;
  const uint32_t i = rep + m_replica_base;
  f(m_replicas[i].itl);
  if (!m_pools.empty()) f(m_pools[m_pool_of[i]].itl);
}

void MetricsRecorder::count_gaps(const Request& r, const GapRun& run) {
  if (run.from == GapsFrom::none || run.count <= 0) return;
  const uint32_t rep = r.replica;
  if (run.from == GapsFrom::mean) {
    each_gap_tally(rep, [&](GapSketch& g) { (void)g.add_run(run); });
    return;
  }
  const GrowArray<int64_t>& e = m_step_ends.of(rep);
  auto idx = static_cast<size_t>(run.at - e.data());  // its second token's step
  const size_t end = idx + static_cast<size_t>(run.count);
  // Its first gap is the step's own when its first token came at the step before.
  if (idx == 0 || e[idx - 1] != run.t0) {
    const int64_t first = run.at[0] - run.t0;
    each_gap_tally(rep, [&](GapSketch& g) { g.add_ns(first); });
    ++idx;
  }
  if (idx >= end) return;
  if (rep >= m_gap_counts.size()) m_gap_counts.resize(rep + 1);
  GrowArray<int32_t>& d = m_gap_counts[rep];
  // Sized with the ends' own room, so that it grows as rarely as they do.
  if (d.size() <= end) d.resize(std::max(end + 1, e.capacity() + 1), 0);
  ++d[idx];
  --d[end];
}

void MetricsRecorder::flush_gap_counts(uint32_t rep, size_t end) {
  if (rep >= m_gap_counts.size()) return;
  GrowArray<int32_t>& d = m_gap_counts[rep];
  const GrowArray<int64_t>& e = m_step_ends.of(rep);
  end = std::min({end, d.size(), e.size()});
  if (end == 0) return;
  // Index 0 is never a counted gap's step (its previous end is not kept: count_gaps), but what
  // it holds is open there.
  int64_t open = 0;  // requests whose gaps span the last step flushed: the counts' sum
  each_gap_tally(rep, [&](GapSketch& g) { open = g.add_step_gaps(e.data(), d.data(), end); });
  std::fill(d.begin(), d.begin() + end, 0);
  // What is still open carries on from the next step.
  if (open != 0 && end < d.size()) d[end] += static_cast<int32_t>(open);
}

void MetricsRecorder::flush_all_gap_counts() {
  for (uint32_t rep = 0; rep < m_gap_counts.size(); ++rep)
    flush_gap_counts(rep, m_gap_counts[rep].size());
}

void MetricsRecorder::add_step_end(uint32_t replica, int64_t end_ns, int64_t kv_capacity_tokens) {
  if (const size_t drop = m_step_ends.due_to_drop(replica, kv_capacity_tokens); drop > 0) {
    // The dropped ends' gaps, and the first kept end's (its previous end is dropped), are final:
    // no later request's gaps reach back to them (count_gaps starts a range past index 0).
    if (replica < m_gap_counts.size()) {
      flush_gap_counts(replica, drop + 1);
      m_gap_counts[replica].erase_front(std::min(drop, m_gap_counts[replica].size()));
    }
  }
  m_step_ends.add(replica, end_ns, kv_capacity_tokens);
}

}  // namespace servesim
