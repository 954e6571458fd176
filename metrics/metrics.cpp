#include "metrics/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "metrics/exports.h"

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
  // The three together: the kept values' six ranks in two passes (QuantileSketch::percentiles).
  constexpr std::array<double, 3> ps{50, 90, 99};
  std::array<double, 3> at{};
  q.percentiles(ps, at);
  d.p50 = at[0];
  d.p90 = at[1];
  d.p99 = at[2];
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

void RequestTally::add_entry(const Request& r, bool ttft_ok, bool own) {
  ++entered;
  if (r.state != RequestState::Released) return;
  if (own) ttft.add((r.first_token - r.spec.arrival).seconds());
  ttft_met += ttft_ok;
}

void RequestTally::add_exit(const Request& r, const GapRun* gaps, const SloVerdict& ok, bool own) {
  ++left;
  if (r.state != RequestState::Released) return;
  ++finished;
  if (own && r.spec.output_tokens > 1)
    tpot.add((r.last_token - r.first_token).seconds() / (r.spec.output_tokens - 1));
  if (own) e2e.add((r.release - r.spec.arrival).seconds());
  if (gaps) (void)itl.add_run(*gaps);
  tpot_met += ok.tpot;
  e2e_met += ok.e2e;
  itl_met += ok.itl;
  all_met += ok.all;
}

MetricsRecorder::MetricsRecorder(size_t exact_limit)
    : m_exact_limit(exact_limit),
      m_replica_limit(exact_limit),
      m_all(exact_limit),
      m_queue(exact_limit),
      m_engine_ttft(exact_limit) {}

MetricsRecorder::MetricsRecorder(std::optional<SloTargets> slo, size_t exact_limit)
    : MetricsRecorder(exact_limit) {
  m_slo = slo;
  if (m_slo && m_slo->ttft_ms) m_ttft_target = Time::from_ms(*m_slo->ttft_ms);
  if (m_slo && m_slo->tpot_ms) m_tpot_target = Time::from_ms(*m_slo->tpot_ms);
  if (m_slo && m_slo->e2e_ms) m_e2e_target = Time::from_ms(*m_slo->e2e_ms);
  if (m_slo && m_slo->itl_ms) m_itl_target = Time::from_ms(*m_slo->itl_ms);
}

void MetricsRecorder::track_replicas(std::vector<int64_t> accelerators,
                                     const std::vector<PoolSpec>& pools) {
  if (accelerators.size() <= 1 && pools.empty()) return;
  m_accelerators = std::move(accelerators);
  m_replica_limit = m_accelerators.size() > k_fleet_replicas
                        ? std::min(m_exact_limit, k_fleet_replica_exact_limit)
                        : m_exact_limit;
  m_replicas.assign(m_accelerators.size(), RequestTally(m_replica_limit));
  m_pools.assign(pools.size(), RequestTally(m_replica_limit));
  m_pool_of.assign(m_accelerators.size(), 0);
  for (uint32_t p = 0; p < pools.size(); ++p)
    for (uint32_t i = pools[p].first_replica;
         i < pools[p].first_replica + pools[p].replicas && i < m_pool_of.size(); ++i)
      m_pool_of[i] = p;
}

void MetricsRecorder::record(const Request& r) {
  // A finished request of a run without targets, classes, tenants or replicas to tally (a
  // single engine's common case): record_plain, the same counts without the branches on them.
  if (r.state == RequestState::Released && !m_slo && m_replicas.empty() &&
      (!m_class_names || m_class_names->empty()) && (!m_tenant_names || m_tenant_names->empty()))
      [[likely]] {
    record_plain(r);
    return;
  }
  record_general(r);
}

[[gnu::always_inline]] inline void MetricsRecorder::tally_finished(const Request& r) {
  ++m_s.finished;
  m_s.prompt_tokens += r.spec.prompt_tokens;
  m_s.output_tokens += r.spec.output_tokens;
  m_s.preemptions += r.preemptions;
  m_s.swap_preemptions += r.swap_preemptions;
  m_s.preempted_requests += r.preemptions > 0;
  m_last_release = std::max(m_last_release, r.release);
  m_outside_engine |= r.spec.api_in != Time::ns(0) || r.spec.api_out != Time::ns(0);
  // The run's own distributions: here, or on the sink's thread from its own copy of these
  // times (the same values in the same order: the same figures).
  if (!m_figures_sink) add_figures(figures_of(r));
}

void MetricsRecorder::record_general(const Request& r) {
  ++m_s.requests;
  m_first_arrival = std::min(m_first_arrival, r.spec.arrival);
  const bool released = r.state == RequestState::Released;
  m_status.add(r);
  if (r.state == RequestState::Rejected) {
    m_s.rejected += r.end_cause == EndCause::None;
    if (r.end_cause == EndCause::None && r.spec.id < m_first_rejected_id) {
      m_first_rejected_id = r.spec.id;
      m_first_rejected_reason = r.reject_reason;
    }
  } else if (r.state == RequestState::Abandoned) {  // timed out or cancelled: by_status
  } else if (!released) {                           // a bounded run stopped before it was served
    ++m_s.unfinished;
  } else {
    tally_finished(r);
  }
  // Its inter-token gaps (metrics/token_gaps.h). Without classes or tenants, the tallies a gap
  // goes into depend only on its replica: its step gaps are counted a step at a time
  // (count_gaps); otherwise each tally takes them one by one (RequestTally::add_exit).
  const bool classes = m_class_names && !m_class_names->empty();
  const bool tenants = m_tenant_names && !m_tenant_names->empty();
  const bool by_step = !classes && !tenants;
  const GapRun run = take_gaps(r, by_step);
  const GapRun* gaps = by_step ? nullptr : &run;
  m_current_gaps = gaps;
  // Its largest gap, for the ITL target (a mean gap is checked as TPOT is, below).
  double largest_gap = 0;
  if (m_slo && m_slo->itl_ms && run.from != GapsFrom::mean)
    GapSketch::each_gap(run, [&](size_t, double g) { largest_gap = std::max(largest_gap, g); });
  const GapsFrom gaps_from = run.from;
  // A rejected or unfinished request meets no target.
  SloVerdict ok;
  if (released && m_slo) {
    ok.ttft = r.first_token - r.spec.arrival <= m_ttft_target;
    // One output token has no TPOT: it meets the TPOT target (as vLLM's benchmark counts it).
    ok.tpot =
        r.spec.output_tokens <= 1 ||
        per_token_within(r.last_token - r.first_token, r.spec.output_tokens - 1, m_tpot_target);
    ok.e2e = r.release - r.spec.arrival <= m_e2e_target;
    // Each gap no longer than the target (no gap: met). Step gaps are whole nanoseconds times
    // 1e-9, as the target is: the comparison is exact; mean gaps compare as TPOT does.
    ok.itl = gaps_from == GapsFrom::mean ? per_token_within(r.last_token - r.first_token,
                                                            r.spec.output_tokens - 1, m_itl_target)
                                         : largest_gap <= m_itl_target.seconds();
    ok.all = (ok.ttft || !m_slo->ttft_ms) && (ok.tpot || !m_slo->tpot_ms) &&
             (ok.e2e || !m_slo->e2e_ms) && (ok.itl || !m_slo->itl_ms);
  }
  m_all.add_entry(r, ok.ttft, false);  // its TTFT, TPOT and E2E: add_figures
  m_all.add_exit(r, gaps, ok, false);
  if (classes) record_class(r, ok);
  if (tenants) record_tenant(r, ok);
  if (m_replicas.empty()) return;
  // Its first token belongs to the replica it was routed to, the rest to the one it left from.
  const bool moved = r.prefill_replica != k_no_replica;
  const uint32_t entry = (moved ? r.prefill_replica : r.replica) + m_replica_base;
  const uint32_t exit = r.replica + m_replica_base;
  if (entry >= m_replicas.size() || exit >= m_replicas.size())
    throw std::logic_error(fmt::format("a request left replica {} of {} tracked",
                                       std::max(entry, exit), m_replicas.size()));
  const auto tally = [&](RequestTally& in, RequestTally& out) {
    in.add_entry(r, ok.ttft);
    out.add_exit(r, gaps, ok);
    if (!released) return;
    out.queue_sum_s += (r.first_admitted - r.spec.arrival).seconds();
    out.engine_ttft_sum_s += r.engine_ttft().seconds();
    const int32_t there = moved ? r.prefill_preemptions : 0;
    const int32_t swapped_there = moved ? r.prefill_swap_preemptions : 0;
    in.preemptions += there;
    in.swap_preemptions += swapped_there;
    out.preemptions += r.preemptions - there;
    out.swap_preemptions += r.swap_preemptions - swapped_there;
  };
  tally(m_replicas[entry], m_replicas[exit]);
  if (m_class_names && !m_class_names->empty()) record_replica_class(r, entry, ok);
  if (!m_pools.empty()) tally(m_pools[m_pool_of[entry]], m_pools[m_pool_of[exit]]);
}

void MetricsRecorder::record_plain(const Request& r) {
  // record()'s steps for such a request, in its order: no target is met (none is set), and its
  // gaps are counted a step at a time (count_gaps).
  ++m_s.requests;
  m_first_arrival = std::min(m_first_arrival, r.spec.arrival);
  ++m_status.finished;
  tally_finished(r);
  count_request_gaps(r);
  m_current_gaps = nullptr;
  ++m_all.entered;  // RequestTally::add_entry and add_exit, without targets or own figures
  ++m_all.left;
  ++m_all.finished;
}

RequestFigures MetricsRecorder::figures_of(const Request& r) {
  RequestFigures f;
  f.ttft_ns = (r.first_token - r.spec.arrival).count_ns();
  f.e2e_ns = (r.release - r.spec.arrival).count_ns();
  f.queue_ns = (r.first_admitted - r.spec.arrival).count_ns();
  f.engine_ttft_ns = r.engine_ttft().count_ns();
  if (r.spec.output_tokens > 1)
    f.tpot_s = (r.last_token - r.first_token).seconds() / (r.spec.output_tokens - 1);
  f.output_tokens = r.spec.output_tokens;
  return f;
}

void MetricsRecorder::add_figures(const RequestFigures& f) {
  // The order of RequestTally::add_entry and add_exit, then record()'s before this.
  m_all.ttft.add(Time::ns(f.ttft_ns).seconds());
  if (f.output_tokens > 1) m_all.tpot.add(f.tpot_s);
  m_all.e2e.add(Time::ns(f.e2e_ns).seconds());
  m_queue.add(Time::ns(f.queue_ns).seconds());
  m_engine_ttft.add(Time::ns(f.engine_ttft_ns).seconds());
}

void MetricsRecorder::own_distributions() {
  OwnDistributions& d = m_own.emplace();
  d.ttft = finish(m_all.ttft);
  d.tpot = finish(m_all.tpot);
  d.e2e = finish(m_all.e2e);
  d.queue = finish(m_queue);
  if (m_outside_engine) d.engine_ttft = finish(m_engine_ttft);
}

void MetricsRecorder::record_class(const Request& r, const SloVerdict& ok) {
  while (m_classes.size() <= r.spec.class_id) m_classes.emplace_back(m_exact_limit);
  tally_class(m_classes[r.spec.class_id], r, ok);
}

void MetricsRecorder::tally_class(ClassTally& c, const Request& r, const SloVerdict& ok) {
  c.all.add_entry(r, ok.ttft);
  tally_class_exit(c, r, ok);
}

void MetricsRecorder::tally_class_exit(ClassTally& c, const Request& r, const SloVerdict& ok) {
  c.all.add_exit(r, m_current_gaps, ok);
  c.status.add(r);
  if (r.state == RequestState::Rejected) {
    c.rejected += r.end_cause == EndCause::None;
  } else if (r.state == RequestState::Abandoned) {
  } else if (r.state != RequestState::Released) {
    ++c.unfinished;
  } else {
    c.preemptions += r.preemptions;
    c.queue.add((r.first_admitted - r.spec.arrival).seconds());
  }
}

void MetricsRecorder::class_summaries(Summary& s, const RunStats& stats) {
  for (size_t k = 0; k < stats.class_names.size(); ++k) {
    ClassSummary c;
    if (k < m_classes.size()) {
      fill_class(c, m_classes[k], s.duration_s);
    } else if (m_slo) {  // a class with no request: nothing met, nothing missed
      RequestTally none(0);
      c.slo = slo_summary(none, s.duration_s, m_slo->accelerators);
    }
    s.classes.emplace_back(stats.class_names[k], std::move(c));
  }
}

void MetricsRecorder::fill_class(ClassSummary& c, ClassTally& t, double duration_s) {
  c.requests = t.all.left;
  c.finished = t.all.finished;
  c.rejected = t.rejected;
  c.unfinished = t.unfinished;
  if (m_track_status || m_status.any_left_early()) c.by_status = t.status;
  c.preemptions = t.preemptions;
  c.ttft_s = finish(t.all.ttft);
  c.tpot_s = finish(t.all.tpot);
  c.e2e_s = finish(t.all.e2e);
  c.queue_s = finish(t.queue);
  c.itl_s = gap_distribution(t.all.itl);
  if (m_slo) c.slo = slo_summary(t.all, duration_s, m_slo->accelerators);
}

SloSummary MetricsRecorder::slo_summary(RequestTally& t, double duration_s, int64_t accelerators) {
  SloSummary o;
  o.percentile = m_slo->percentile;
  o.accelerators = accelerators;
  const auto share = [](int64_t n, int64_t of) {
    return of ? static_cast<double>(n) / static_cast<double>(of) : 0.0;
  };
  // The percentile is reported in whole nanoseconds (as simulated times are), but checked
  // unrounded, allowing only for the noise of times held as double seconds (1e-12 relative).
  const auto check = [&](double target_ms, Time target, QuantileSketch& q, int64_t met, int64_t of,
                         bool met_when_empty) {
    SloCheck c;
    c.target_ms = target_ms;
    c.requests_met = met;
    c.attainment = share(met, of);
    c.met = met_when_empty;
    if (q.count() > 0) {
      const double p_ns = q.percentile(o.percentile) * 1e9;
      c.percentile_ms = std::round(p_ns) / 1e6;
      c.met = p_ns <= static_cast<double>(target.count_ns()) * (1 + 1e-12);
    }
    return c;
  };
  // TTFT over the requests that arrived here, the rest over those that left from here (the
  // same requests, but for a disaggregated cluster's replicas and pools).
  if (m_slo->ttft_ms)
    o.ttft = check(*m_slo->ttft_ms, m_ttft_target, t.ttft, t.ttft_met, t.entered, false);
  // No TPOT at all (every finished request had one token): each met it, so the run does.
  if (m_slo->tpot_ms)
    o.tpot = check(*m_slo->tpot_ms, m_tpot_target, t.tpot, t.tpot_met, t.left, t.finished > 0);
  if (m_slo->e2e_ms) o.e2e = check(*m_slo->e2e_ms, m_e2e_target, t.e2e, t.e2e_met, t.left, false);
  // No gap at all (one-token requests only): each met it, as with TPOT.
  if (m_slo->itl_ms)
    o.itl = check(*m_slo->itl_ms, m_itl_target, t.itl.q, t.itl_met, t.left, t.finished > 0);
  o.requests_met = t.all_met;
  o.attainment = share(t.all_met, t.left);
  if (duration_s > 0) o.goodput_per_s = static_cast<double>(t.all_met) / duration_s;
  o.goodput_per_s_per_accelerator = o.goodput_per_s / static_cast<double>(o.accelerators);
  return o;
}

GapDistribution MetricsRecorder::gap_distribution(GapSketch& g) const {
  GapDistribution d;
  static_cast<Distribution&>(d) = finish(g.q);
  d.mean = g.mean();  // from the exact sums (GapSketch), not the sketch's running sum
  d.median = d.p50;
  d.std = g.std();
  for (double p : m_percentiles)
    d.percentiles.emplace_back("p" + percentile_word(p), d.count ? g.q.percentile(p) : 0.0);
  return d;
}

std::string MetricsRecorder::first_rejection() const {
  if (m_first_rejected_id == UINT64_MAX) return {};
  return fmt::format("request {}: {}", m_first_rejected_id, m_first_rejected_reason);
}

void StatusCounts::add(const Request& r) {
  switch (r.state) {
    case RequestState::Released:
      ++finished;
      break;
    case RequestState::Rejected:
      ++(r.end_cause == EndCause::Failed ? failed
         : r.end_cause == EndCause::Shed ? shed
                                         : rejected);
      break;
    case RequestState::Abandoned:
      ++(r.end_cause == EndCause::Failed      ? failed
         : r.end_cause == EndCause::Cancelled ? cancelled
                                              : timed_out);
      break;
    default:
      ++unfinished;
  }
}

Summary MetricsRecorder::summary(const RunStats& stats) {
  // The gaps first: the FiguresSink's thread touches none of what they add to (add_figures'
  // distributions are others), so they are flushed while it works out its last batch and the
  // distributions (on the Vidur comparison, whose 67,558 step ends all wait for this, about
  // 0.3 ms that the engine's thread used to wait out first).
  flush_all_gap_counts();
  if (m_figures_sink) {  // every figure added before the distributions are read
    FiguresSink* const sink = std::exchange(m_figures_sink, nullptr);
    sink->join();
  }
  if (!m_replicas.empty()) replica_order_sums();
  Summary s = m_s;
  if (m_track_status || m_status.any_left_early()) s.by_status = m_status;
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
  if (!m_own) own_distributions();  // here, or on the FiguresSink's thread (finish_figures)
  s.ttft_s = m_own->ttft;
  if (m_outside_engine) s.server_ttft_s = m_own->engine_ttft;
  s.tpot_s = m_own->tpot;
  s.e2e_s = m_own->e2e;
  s.queue_s = m_own->queue;
  m_own.reset();  // a second summary() works them out again, as before
  s.itl_s = gap_distribution(m_all.itl);
  s.steps = stats.steps;
  s.stopped_by = stats.stopped_by;
  s.mean_batch_sequences =
      stats.steps ? static_cast<double>(stats.seat_steps) / static_cast<double>(stats.steps) : 0;
  s.prefill_tokens_computed = stats.prefill_tokens;
  s.kv_capacity_tokens = stats.kv_capacity_tokens;
  s.kv_peak_used_tokens = stats.peak_kv_used_tokens;
  s.peak_in_flight = stats.peak_in_flight;
  s.prefix = stats.prefix;
  s.offload = stats.offload;
  s.pipeline = pipeline_summary(stats.replicas);
  if (const std::optional<SpeculativeStats>& p = stats.speculative) {
    const auto share = [](double part, double whole) { return whole > 0 ? part / whole : 0.0; };
    s.speculative = SpeculativeSummary{
        p->method,
        p->k,
        p->verify_steps,
        p->verifies,
        p->drafted_tokens,
        p->accepted_tokens,
        share(static_cast<double>(p->accepted_tokens), static_cast<double>(p->drafted_tokens)),
        share(static_cast<double>(p->accepted_tokens + p->verifies),
              static_cast<double>(p->verifies)),
        p->off_steps,
        share(p->proposer_ms * 1e6, static_cast<double>(stats.busy_ns))};
  }
  if (const std::optional<LoraStats>& l = stats.lora)
    s.lora = LoraSummary{l->adapters, l->max_loras,  l->max_cpu_loras,    l->requests_with_adapter,
                         l->gpu_hits, l->gpu_misses, l->host_hits,        l->host_misses,
                         l->load_s,   l->compute_s,  l->skipped_for_slots};
  s.workload_counters = stats.workload_counters;
  if (stats.costed_steps > 0 && stats.busy_ns > 0) {
    const double busy_s = static_cast<double>(stats.busy_ns) * 1e-9;
    s.mbu = stats.bytes_moved / (busy_s * stats.peak_bytes_per_s);
    s.mfu = stats.flops / (busy_s * stats.peak_flops_per_s);
    s.bandwidth_bound_step_share =
        static_cast<double>(stats.bandwidth_bound_steps) / static_cast<double>(stats.costed_steps);
  }
  if (m_slo) s.slo = slo_summary(m_all, s.duration_s, m_slo->accelerators);
  if (stats.autoscale) s.autoscale = autoscale_summary(*stats.autoscale);
  s.energy = energy_summary(stats, m_power, m_power_accelerators, s.duration_s, s.finished,
                            s.output_tokens);
  if (const std::optional<FailureStats>& f = stats.failures) {
    FailureSummary& fs = s.failures.emplace();
    fs.failures = f->failures;
    fs.downtime_s = f->downtime_s;
    fs.availability = f->availability;
    fs.retries = f->retries;
    fs.failed_requests = f->failed_requests;
    fs.lost_tokens = f->lost_tokens;
    fs.lost_steps = f->lost_steps;
    fs.waited_requests = f->waited_requests;
    if (s.slo) fs.slo_attainment = s.slo->attainment;
  }
  if (stats.replicas.size() > 1 || !stats.pools.empty()) {
    s.busy_share /= static_cast<double>(stats.replicas.size());  // the replicas' mean
    replica_summaries(s, stats);
    replica_class_summaries(s, stats);
  }
  if (!stats.pools.empty()) pool_summaries(s, stats);
  class_summaries(s, stats);
  tenant_summaries(s, stats);
  return s;
}

namespace {

/// A tally's requests, distributions and preemptions into a replica's or pool's summary (its
/// gaps: MetricsRecorder::gap_distribution).
template <class Out>
void fill_from(Out& o, RequestTally& t) {
  o.requests = t.left;
  o.finished = t.finished;
  o.preemptions = t.preemptions;
  o.swap_preemptions = t.swap_preemptions;
  o.ttft_s = finish(t.ttft);
  o.tpot_s = finish(t.tpot);
  o.e2e_s = finish(t.e2e);
  o.ttft_mean_s = o.ttft_s.mean;
  o.tpot_mean_s = o.tpot_s.mean;
  o.e2e_mean_s = o.e2e_s.mean;
}

}  // namespace

SloSummary MetricsRecorder::part_slo_summary(RequestTally& t, double duration_s,
                                             int64_t accelerators) {
  SloSummary o = slo_summary(t, duration_s, accelerators);
  // A target that no request here is judged on (no TTFT on a decode replica; no request left
  // a prefill replica) has no check, rather than a "missed" one.
  if (t.entered == 0) o.ttft.reset();
  if (t.left == 0) o.tpot.reset();
  if (t.left == 0) o.itl.reset();
  return o;
}

void MetricsRecorder::replica_summaries(Summary& s, const RunStats& stats) {
  for (size_t i = 0; i < stats.replicas.size(); ++i) {
    const ReplicaStats& rs = stats.replicas[i];
    ReplicaSummary r;
    if (i < m_replicas.size()) {  // tracked (track_replicas)
      fill_from(r, m_replicas[i]);
      r.itl_s = gap_distribution(m_replicas[i].itl);
      if (m_slo) r.slo = part_slo_summary(m_replicas[i], s.duration_s, m_accelerators[i]);
    }
    r.routed = rs.routed;
    r.steps = rs.steps;
    if (s.duration_s > 0) r.busy_share = static_cast<double>(rs.busy_ns) * 1e-9 / s.duration_s;
    r.mean_batch_sequences =
        rs.steps ? static_cast<double>(rs.seat_steps) / static_cast<double>(rs.steps) : 0;
    r.kv_capacity_tokens = rs.kv_capacity_tokens;
    r.kv_peak_used_tokens = rs.peak_kv_used_tokens;
    if (!stats.pools.empty()) r.pool = stats.pools[rs.pool].name;
    r.handed_off = rs.handed_off;
    r.received = rs.received;
    s.replicas.push_back(r);
  }
}

void MetricsRecorder::pool_summaries(Summary& s, const RunStats& stats) {
  static constexpr const char* k_roles[] = {"mixed", "prefill", "decode"};
  for (size_t k = 0; k < stats.pools.size(); ++k) {
    const PoolSpec& spec = stats.pools[k];
    PoolSummary p;
    p.name = spec.name;
    p.role = k_roles[static_cast<int>(spec.role)];
    p.replicas = spec.replicas;
    p.accelerators = spec.accelerators_per_replica * spec.replicas;
    if (k < m_pools.size()) {
      fill_from(p, m_pools[k]);
      p.itl_s = gap_distribution(m_pools[k].itl);
      if (m_slo) p.slo = part_slo_summary(m_pools[k], s.duration_s, p.accelerators);
    }
    for (uint32_t i = spec.first_replica; i < spec.first_replica + spec.replicas; ++i) {
      const ReplicaSummary& r = s.replicas[i];
      p.routed += r.routed;
      p.handed_off += r.handed_off;
      p.received += r.received;
      p.steps += r.steps;
      p.busy_share += r.busy_share / spec.replicas;
      p.kv_capacity_tokens += r.kv_capacity_tokens;
      p.kv_peak_used_tokens += r.kv_peak_used_tokens;
    }
    s.pools.push_back(std::move(p));
  }
  if (stats.kv_transfer) {
    KvTransferStats k = *stats.kv_transfer;  // finish() sorts the sketches
    s.kv_transfer =
        KvTransferSummary{k.transfers, k.bytes, finish(k.transfer_s), finish(k.admit_wait_s)};
  }
}

Summary summarize(const std::vector<Request>& requests, const RunStats& stats) {
  MetricsRecorder m;
  std::vector<int64_t> accelerators(stats.replicas.size(), 1);
  for (const PoolSpec& p : stats.pools)
    for (uint32_t i = p.first_replica; i < p.first_replica + p.replicas; ++i)
      accelerators.at(i) = p.accelerators_per_replica;
  m.track_replicas(std::move(accelerators), stats.pools);
  m.set_class_names(&stats.class_names);
  m.set_tenant_names(&stats.tenant_names);
  for (const Request& r : requests) m.record(r);
  return m.summary(stats);
}

}  // namespace servesim
