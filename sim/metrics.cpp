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

namespace {

/// span / gaps <= target, decided exactly on integer nanoseconds (the quotient is not rounded).
bool per_token_within(Time span, int64_t gaps, Time target) {
  const int64_t q = span.count_ns() / gaps;
  return q < target.count_ns() || (q == target.count_ns() && span.count_ns() % gaps == 0);
}

}  // namespace

MetricsRecorder::MetricsRecorder(size_t exact_limit)
    : m_ttft(exact_limit), m_tpot(exact_limit), m_e2e(exact_limit), m_queue(exact_limit) {}

MetricsRecorder::MetricsRecorder(std::optional<SloTargets> slo, size_t exact_limit)
    : MetricsRecorder(exact_limit) {
  m_slo = slo;
  if (m_slo && m_slo->ttft_ms) m_ttft_target = Time::from_ms(*m_slo->ttft_ms);
  if (m_slo && m_slo->tpot_ms) m_tpot_target = Time::from_ms(*m_slo->tpot_ms);
}

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
  if (m_slo) record_slo(r);
  if (r.replica >= m_replicas.size()) m_replicas.resize(r.replica + 1);
  PerReplica& p = m_replicas[r.replica];
  ++p.finished;
  p.ttft_s += (r.first_token - r.spec.arrival).seconds();
  p.e2e_s += (r.release - r.spec.arrival).seconds();
  if (r.spec.output_tokens > 1) {
    ++p.tpot_count;
    p.tpot_s += (r.last_token - r.first_token).seconds() / (r.spec.output_tokens - 1);
  }
}

// Only finished requests come here: a rejected or unfinished one meets no target.
void MetricsRecorder::record_slo(const Request& r) {
  const bool ttft_ok = r.first_token - r.spec.arrival <= m_ttft_target;
  // One output token has no TPOT: it meets the TPOT target (as vLLM's benchmark counts it).
  const bool tpot_ok =
      r.spec.output_tokens <= 1 ||
      per_token_within(r.last_token - r.first_token, r.spec.output_tokens - 1, m_tpot_target);
  m_ttft_met += ttft_ok;
  m_tpot_met += tpot_ok;
  m_both_met += (ttft_ok || !m_slo->ttft_ms) && (tpot_ok || !m_slo->tpot_ms);
}

SloSummary MetricsRecorder::slo_summary(const Summary& s) {
  SloSummary o;
  o.percentile = m_slo->percentile;
  o.accelerators = m_slo->accelerators;
  const auto share = [&](int64_t n) {
    return s.requests ? static_cast<double>(n) / static_cast<double>(s.requests) : 0.0;
  };
  // The percentile is reported in whole nanoseconds (as simulated times are), but checked
  // unrounded, allowing only for the noise of times held as double seconds (1e-12 relative).
  const auto check = [&](double target_ms, Time target, QuantileSketch& q, int64_t met,
                         bool met_when_empty) {
    SloCheck c;
    c.target_ms = target_ms;
    c.requests_met = met;
    c.attainment = share(met);
    c.met = met_when_empty;
    if (q.count() > 0) {
      const double p_ns = q.percentile(o.percentile) * 1e9;
      c.percentile_ms = std::round(p_ns) / 1e6;
      c.met = p_ns <= static_cast<double>(target.count_ns()) * (1 + 1e-12);
    }
    return c;
  };
  if (m_slo->ttft_ms) o.ttft = check(*m_slo->ttft_ms, m_ttft_target, m_ttft, m_ttft_met, false);
  // No TPOT at all (every finished request had one token): each met it, so the run does.
  if (m_slo->tpot_ms)
    o.tpot = check(*m_slo->tpot_ms, m_tpot_target, m_tpot, m_tpot_met, s.finished > 0);
  o.requests_met = m_both_met;
  o.attainment = share(m_both_met);
  if (s.duration_s > 0) o.goodput_per_s = static_cast<double>(m_both_met) / s.duration_s;
  o.goodput_per_s_per_accelerator = o.goodput_per_s / static_cast<double>(o.accelerators);
  return o;
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
  if (m_slo) s.slo = slo_summary(s);
  if (stats.replicas.size() > 1 || !stats.pools.empty()) {
    const auto n = static_cast<double>(stats.replicas.size());
    s.busy_share /= n;  // the replicas' mean
    m_replicas.resize(stats.replicas.size());
    for (size_t i = 0; i < stats.replicas.size(); ++i) {
      const ReplicaStats& rs = stats.replicas[i];
      const PerReplica& p = m_replicas[i];
      ReplicaSummary r;
      r.routed = rs.routed;
      r.finished = p.finished;
      r.steps = rs.steps;
      if (s.duration_s > 0) r.busy_share = static_cast<double>(rs.busy_ns) * 1e-9 / s.duration_s;
      r.mean_batch_sequences =
          rs.steps ? static_cast<double>(rs.seat_steps) / static_cast<double>(rs.steps) : 0;
      r.kv_capacity_tokens = rs.kv_capacity_tokens;
      r.kv_peak_used_tokens = rs.peak_kv_used_tokens;
      if (p.finished > 0) {
        r.ttft_mean_s = p.ttft_s / static_cast<double>(p.finished);
        r.e2e_mean_s = p.e2e_s / static_cast<double>(p.finished);
      }
      if (p.tpot_count > 0) r.tpot_mean_s = p.tpot_s / static_cast<double>(p.tpot_count);
      if (!stats.pools.empty()) r.pool = stats.pools[rs.pool].name;
      r.handed_off = rs.handed_off;
      r.received = rs.received;
      s.replicas.push_back(r);
    }
  }
  if (!stats.pools.empty()) pool_summaries(s, stats);
  return s;
}

void MetricsRecorder::pool_summaries(Summary& s, const RunStats& stats) {
  static constexpr const char* k_roles[] = {"mixed", "prefill", "decode"};
  for (const PoolSpec& spec : stats.pools) {
    PoolSummary p;
    p.name = spec.name;
    p.role = k_roles[static_cast<int>(spec.role)];
    p.replicas = spec.replicas;
    p.accelerators = spec.accelerators_per_replica * spec.replicas;
    PerReplica sums;
    for (uint32_t i = spec.first_replica; i < spec.first_replica + spec.replicas; ++i) {
      const ReplicaSummary& r = s.replicas[i];
      p.routed += r.routed;
      p.handed_off += r.handed_off;
      p.received += r.received;
      p.finished += r.finished;
      p.steps += r.steps;
      p.busy_share += r.busy_share / spec.replicas;
      p.kv_capacity_tokens += r.kv_capacity_tokens;
      p.kv_peak_used_tokens += r.kv_peak_used_tokens;
      const PerReplica& m = m_replicas[i];
      sums.finished += m.finished;
      sums.tpot_count += m.tpot_count;
      sums.ttft_s += m.ttft_s;
      sums.tpot_s += m.tpot_s;
      sums.e2e_s += m.e2e_s;
    }
    if (sums.finished > 0) {
      p.ttft_mean_s = sums.ttft_s / static_cast<double>(sums.finished);
      p.e2e_mean_s = sums.e2e_s / static_cast<double>(sums.finished);
    }
    if (sums.tpot_count > 0) p.tpot_mean_s = sums.tpot_s / static_cast<double>(sums.tpot_count);
    s.pools.push_back(std::move(p));
  }
  if (stats.kv_transfer) {
    KvTransferStats k = *stats.kv_transfer;  // finish() sorts the sketches
    s.kv_transfer = KvTransferSummary{k.transfers, k.bytes, finish(k.transfer_s),
                                      finish(k.admit_wait_s)};
  }
}

Summary summarize(const std::vector<Request>& requests, const RunStats& stats) {
  MetricsRecorder m;
  for (const Request& r : requests) m.record(r);
  return m.summary(stats);
}

}  // namespace servesim
