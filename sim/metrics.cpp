#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace servesim {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

Distribution distribution(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.count = static_cast<int64_t>(v.size());
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  d.p50 = percentile(v, 50);
  d.p90 = percentile(v, 90);
  d.p99 = percentile(v, 99);
  d.max = v.back();
  return d;
}

Summary summarize(const std::vector<Request>& requests, const RunStats& stats) {
  Summary s;
  std::vector<double> ttft, tpot, e2e, queue;
  Time first_arrival = Time::max();
  Time last_release;
  for (const Request& r : requests) {
    ++s.requests;
    first_arrival = std::min(first_arrival, r.spec.arrival);
    if (r.state == RequestState::Rejected) {
      ++s.rejected;
      continue;
    }
    if (r.state != RequestState::Released) {  // a bounded run stopped before it was served
      ++s.unfinished;
      continue;
    }
    ++s.finished;
    s.prompt_tokens += r.spec.prompt_tokens;
    s.output_tokens += r.spec.output_tokens;
    s.preemptions += r.preemptions;
    s.preempted_requests += r.preemptions > 0;
    last_release = std::max(last_release, r.release);
    ttft.push_back((r.first_token - r.spec.arrival).seconds());
    if (r.spec.output_tokens > 1)
      tpot.push_back((r.last_token - r.first_token).seconds() / (r.spec.output_tokens - 1));
    e2e.push_back((r.release - r.spec.arrival).seconds());
    queue.push_back((r.first_admitted - r.spec.arrival).seconds());
  }
  if (s.finished > 0) {
    s.first_arrival_s = first_arrival.seconds();
    s.last_release_s = last_release.seconds();
    s.duration_s = (last_release - first_arrival).seconds();
    if (s.duration_s > 0) {
      s.output_tokens_per_s = static_cast<double>(s.output_tokens) / s.duration_s;
      s.requests_per_s = static_cast<double>(s.finished) / s.duration_s;
      s.busy_share = static_cast<double>(stats.busy_ns) * 1e-9 / s.duration_s;
    }
  }
  s.ttft_s = distribution(std::move(ttft));
  s.tpot_s = distribution(std::move(tpot));
  s.e2e_s = distribution(std::move(e2e));
  s.queue_s = distribution(std::move(queue));
  s.steps = stats.steps;
  s.stopped_by = stats.stopped_by;
  s.mean_batch_sequences =
      stats.steps ? static_cast<double>(stats.seat_steps) / static_cast<double>(stats.steps) : 0;
  s.prefill_tokens_computed = stats.prefill_tokens;
  s.kv_capacity_tokens = stats.kv_capacity_tokens;
  s.kv_peak_used_tokens = stats.peak_kv_used_tokens;
  if (stats.costed_steps > 0 && stats.busy_ns > 0) {
    const double busy_s = static_cast<double>(stats.busy_ns) * 1e-9;
    s.mbu = stats.bytes_moved / (busy_s * stats.peak_bytes_per_s);
    s.mfu = stats.flops / (busy_s * stats.peak_flops_per_s);
    s.bandwidth_bound_step_share =
        static_cast<double>(stats.bandwidth_bound_steps) / static_cast<double>(stats.costed_steps);
  }
  return s;
}

}  // namespace servesim
