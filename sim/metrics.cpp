#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace servesim {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

namespace {

Distribution finish(QuantileSketch& q) {
  Distribution d;
  d.count = q.count();
  d.exact = q.exact();
  if (d.count == 0) return d;
  d.mean = q.mean();
  d.p50 = q.percentile(50);
  d.p90 = q.percentile(90);
  d.p99 = q.percentile(99);
  d.max = q.max();
  return d;
}

}  // namespace

Distribution distribution(std::vector<double> v) {
  QuantileSketch q(v.size());
  for (double x : v) q.add(x);
  return finish(q);
}

MetricsRecorder::MetricsRecorder(size_t exact_limit)
    : m_ttft(exact_limit), m_tpot(exact_limit), m_e2e(exact_limit), m_queue(exact_limit) {}

void MetricsRecorder::record(const Request& r) {
  ++m_s.requests;
  m_first_arrival = std::min(m_first_arrival, r.spec.arrival);
  if (r.state == RequestState::Rejected) {
    ++m_s.rejected;
    if (r.spec.id < m_first_rejected_id) {
      m_first_rejected_id = r.spec.id;
      m_first_rejected_reason = r.reject_reason;
    }
    return;
  }
  if (r.state != RequestState::Released) {  // a bounded run stopped before it was served
    ++m_s.unfinished;
    return;
  }
  ++m_s.finished;
  m_s.prompt_tokens += r.spec.prompt_tokens;
  m_s.output_tokens += r.spec.output_tokens;
  m_s.preemptions += r.preemptions;
  m_s.preempted_requests += r.preemptions > 0;
  m_last_release = std::max(m_last_release, r.release);
  m_ttft.add((r.first_token - r.spec.arrival).seconds());
  if (r.spec.output_tokens > 1)
    m_tpot.add((r.last_token - r.first_token).seconds() / (r.spec.output_tokens - 1));
  m_e2e.add((r.release - r.spec.arrival).seconds());
  m_queue.add((r.first_admitted - r.spec.arrival).seconds());
}

std::string MetricsRecorder::first_rejection() const {
  if (m_first_rejected_id == UINT64_MAX) return {};
  return fmt::format("request {}: {}", m_first_rejected_id, m_first_rejected_reason);
}

Summary MetricsRecorder::summary(const RunStats& stats) {
  Summary s = m_s;
  if (s.finished > 0) {
    s.first_arrival_s = m_first_arrival.seconds();
    s.last_release_s = m_last_release.seconds();
    s.duration_s = (m_last_release - m_first_arrival).seconds();
    if (s.duration_s > 0) {
      s.output_tokens_per_s = static_cast<double>(s.output_tokens) / s.duration_s;
      s.requests_per_s = static_cast<double>(s.finished) / s.duration_s;
      s.busy_share = static_cast<double>(stats.busy_ns) * 1e-9 / s.duration_s;
    }
  }
  s.ttft_s = finish(m_ttft);
  s.tpot_s = finish(m_tpot);
  s.e2e_s = finish(m_e2e);
  s.queue_s = finish(m_queue);
  s.steps = stats.steps;
  s.stopped_by = stats.stopped_by;
  s.mean_batch_sequences =
      stats.steps ? static_cast<double>(stats.seat_steps) / static_cast<double>(stats.steps) : 0;
  s.prefill_tokens_computed = stats.prefill_tokens;
  s.kv_capacity_tokens = stats.kv_capacity_tokens;
  s.kv_peak_used_tokens = stats.peak_kv_used_tokens;
  s.peak_in_flight = stats.peak_in_flight;
  s.prefix = stats.prefix;
  s.workload_counters = stats.workload_counters;
  if (stats.costed_steps > 0 && stats.busy_ns > 0) {
    const double busy_s = static_cast<double>(stats.busy_ns) * 1e-9;
    s.mbu = stats.bytes_moved / (busy_s * stats.peak_bytes_per_s);
    s.mfu = stats.flops / (busy_s * stats.peak_flops_per_s);
    s.bandwidth_bound_step_share =
        static_cast<double>(stats.bandwidth_bound_steps) / static_cast<double>(stats.costed_steps);
  }
  return s;
}

Summary summarize(const std::vector<Request>& requests, const RunStats& stats) {
  MetricsRecorder m;
  for (const Request& r : requests) m.record(r);
  return m.summary(stats);
}

}  // namespace servesim
