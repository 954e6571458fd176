#include "sizing/sweep_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "core/capacity_error.h"
#include "core/interrupt.h"
#include "metrics/output.h"
#include "sim/recorder.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace servesim {
namespace {

// The first and last arrival and the count, for the offered rate.
class ArrivalSpan final : public RequestRecorder {
 public:
  void record(const Request& r) override {
    ++m_count;
    m_first = std::min(m_first, r.spec.arrival);
    m_last = std::max(m_last, r.spec.arrival);
  }
  [[nodiscard]] double rate_per_s() const {
    if (m_count < 2 || m_last <= m_first) return 0;
    return static_cast<double>(m_count - 1) / (m_last - m_first).seconds();
  }

 private:
  int64_t m_count = 0;
  Time m_first = Time::max();
  Time m_last;
};

void fill_metrics(PointResult& r, const Probe& p) {
  const Summary& s = p.summary;
  r.replicas = p.replicas;
  r.accelerators = p.accelerators;
  if (p.price_per_accelerator_hour) {
    double paid = static_cast<double>(p.accelerators);
    // Autoscaled (docs/autoscaling.md): the accelerators paid for on average over the run, not
    // the most the cluster may hold.
    if (s.autoscale && s.autoscale->horizon_s > 0)
      paid = s.autoscale->accelerator_hours * 3600.0 / s.autoscale->horizon_s;
    r.cost_per_hour_usd = *p.price_per_accelerator_hour * paid;
  }
  r.requests_per_s = s.requests_per_s;
  r.output_tokens_per_s = s.output_tokens_per_s;
  if (r.cost_per_hour_usd && *r.cost_per_hour_usd > 0)
    r.tokens_per_usd = s.output_tokens_per_s * 3600.0 / *r.cost_per_hour_usd;
  if (s.energy && s.energy->joules > 0) r.tokens_per_joule = s.energy->output_tokens_per_joule;
  r.ttft_p50_ms = s.ttft_s.p50 * 1e3;
  r.ttft_p99_ms = s.ttft_s.p99 * 1e3;
  r.tpot_p50_ms = s.tpot_s.p50 * 1e3;
  r.tpot_p99_ms = s.tpot_s.p99 * 1e3;
  r.e2e_p99_ms = s.e2e_s.p99 * 1e3;
  if (s.slo) {
    r.goodput_req_per_s = s.slo->goodput_per_s;
    r.slo_attainment = s.slo->attainment;
  }
  if (s.by_status) {
    r.rejected = s.by_status->rejected;
    r.shed = s.by_status->shed;
    r.timed_out = s.by_status->timed_out;
    r.cancelled = s.by_status->cancelled;
  } else {
    r.rejected = s.rejected;
  }
}

// One run of point `i` with `overrides` (spec.overrides(i), and the replica count in
// min_replicas mode); `tokens`, when set, records every token's time.
Probe probe_point(const SweepSpec& spec, const std::vector<std::string>& overrides,
                  const RunLimits& limits, TokenTimes* tokens) {
  Probe p = run_probe(spec.base_text, spec.base_file, overrides, ProbeOptions{limits, {}, tokens});
  if (!p.built) return p;
  try {
    p.price_per_accelerator_hour = price_per_accelerator_hour(spec, p.doc->root());
  } catch (const InputError& e) {
    p.built = false;
    p.error = e.what();
  }
  return p;
}

// A run that cannot serve its workload at all: refused for want of memory, or rejected requests.
// Any other failure is no property of the deployment, and must not pass for one (a missing
// table once made every measured chip "infeasible" and named the one without tables cheapest).
std::optional<std::string> infeasible_reason(const SweepSpec& spec, size_t i, const Probe& p) {
  if (!p.capacity && (!p.built || !p.error.empty()))
    throw InputError(
        fmt::format("point {} ({}) cannot be evaluated: {}", i, spec.label(i), p.error));
  if (!p.built) return "config: " + p.error;
  if (p.summary.rejected > 0)
    return fmt::format("{} requests rejected (first: {})", p.summary.rejected, p.first_rejection);
  return std::nullopt;
}

PointResult from_probe(const SweepSpec& spec, size_t i, const Probe& p) {
  PointResult r;
  r.point = i;
  if (const auto why = infeasible_reason(spec, i, p)) {
    r.reason = *why;
    return r;
  }
  r.feasible = true;
  r.meets_slo = meets_slo(p.summary, spec.slo.min_attainment);
  fill_metrics(r, p);
  return r;
}

// The row of one run of point `i`, with its latency percentiles when the sweep asks for them.
PointResult run_row(const SweepSpec& spec, size_t i, const std::vector<std::string>& overrides,
                    const RunLimits& limits) {
  std::optional<TokenTimes> tokens;
  if (!spec.percentiles.empty()) tokens.emplace();
  PointResult r =
      from_probe(spec, i, probe_point(spec, overrides, limits, tokens ? &*tokens : nullptr));
  if (tokens && r.feasible) {
    const LatencyReport lr = latency_report(*tokens, spec.percentiles);
    for (const LatencyStats* st : {&lr.ttft, &lr.tpot, &lr.itl, &lr.e2e})
      for (const auto& pv : st->percentiles) r.latency_ms.push_back(pv.second * 1e3);
  }
  return r;
}

PointResult min_replicas(const SweepSpec& spec, size_t i, const RunLimits& limits) {
  auto run_n = [&](int64_t n) {
    PointResult r = run_row(spec, i, replica_overrides(spec, i, n), limits);
    r.run_replicas = n;
    return r;
  };
  PointResult lo_row = run_n(1);
  if (!lo_row.feasible || lo_row.meets_slo) return lo_row;
  int64_t lo = 1, hi = 1;
  PointResult hi_row = lo_row;
  while (!hi_row.meets_slo && hi < spec.max_replicas) {
    lo = hi;
    hi = std::min(hi * 2, spec.max_replicas);
    hi_row = run_n(hi);
    if (!hi_row.feasible) return hi_row;
  }
  if (!hi_row.meets_slo) {
    hi_row.reason =
        fmt::format("no replica count up to max_replicas = {} meets the SLOs", spec.max_replicas);
    return hi_row;
  }
  while (hi - lo > 1) {  // lo fails, hi meets
    const int64_t mid = lo + (hi - lo) / 2;
    PointResult m = run_n(mid);
    if (m.feasible && m.meets_slo) {
      hi = mid;
      hi_row = std::move(m);
    } else {
      lo = mid;
    }
  }
  return hi_row;
}

}  // namespace

Probe run_probe(const std::string& text, const std::string& file,
                const std::vector<std::string>& overrides, const RunLimits& limits) {
  return run_probe(text, file, overrides, ProbeOptions{limits, {}, nullptr});
}

Probe run_probe(const std::string& text, const std::string& file,
                const std::vector<std::string>& overrides, const ProbeOptions& options) {
  const RunLimits& limits = options.limits;
  Probe p;
  std::optional<Scenario> sc;
  std::shared_ptr<Document> doc;
  try {
    doc = std::make_shared<Document>(text, file);
    for (const auto& o : overrides) doc->apply_override(o);
    sc.emplace(build_scenario(doc));
    p.doc = doc;
  } catch (const CapacityError& e) {
    p.error = e.what();
    p.capacity = true;
    return p;
  } catch (const InputError& e) {
    p.error = e.what();
    return p;
  }
  p.built = true;
  p.replicas = static_cast<int64_t>(sc->components.replicas.size());
  p.accelerators = sc->slo ? sc->slo->accelerators : p.replicas;
  const uint64_t seed = sc->seed;
  const std::optional<SloTargets> slo = sc->slo;
  const bool admission = sc->components.admission != nullptr;
  try {
    Simulation sim(std::move(sc->components), false, limits);
    MetricsRecorder metrics(slo);
    metrics.set_percentiles(options.percentiles);
    metrics.set_power(std::move(sc->replica_power), sc->replica_accelerators);
    metrics.track_replicas(std::move(sc->replica_accelerators), sim.stats().pools);
    metrics.set_class_names(&sim.class_names());
    metrics.set_tenant_names(&sim.tenant_names());
    metrics.set_track_status(admission);
    ArrivalSpan span;
    sim.add_recorder(metrics);
    sim.add_recorder(span);
    if (options.tokens) {
      sim.add_step_observer(*options.tokens);
      sim.add_recorder(*options.tokens);
    }
    sim.run();
    check_interrupt(limits.interrupt);  // a probe cut short by a signal is no result
    p.summary = metrics.summary(sim.stats());
    p.first_rejection = metrics.first_rejection();
    p.offered_rate_per_s = span.rate_per_s();
    p.summary_json = summary_json(p.summary, doc->root(), seed).dump(2) + "\n";
  } catch (const InputError& e) {
    p.error = e.what();  // bad input found while streaming the workload
  }
  return p;
}

PointResult evaluate_point(const SweepSpec& spec, size_t i, const RunLimits& limits) {
  if (spec.mode == SweepMode::MinReplicas) return min_replicas(spec, i, limits);
  return run_row(spec, i, spec.overrides(i), limits);
}

std::vector<std::string> replica_overrides(const SweepSpec& spec, size_t i, int64_t replicas) {
  // Without a cluster section, cluster.replicas alone is incomplete: give a router too.
  Document base(spec.base_text, spec.base_file);
  for (const auto& s : spec.sets) base.apply_override(s);
  const bool has_cluster = yaml_child(base.root(), "cluster").IsMap();
  std::vector<std::string> o = spec.overrides(i);
  o.push_back(has_cluster ? fmt::format("cluster.replicas={}", replicas)
                          : fmt::format("cluster={{replicas: {}, router: {{kind: round_robin}}}}",
                                        replicas));
  return o;
}

Probe rerun_row(const SweepSpec& spec, const PointResult& row, TokenTimes& tokens,
                const RunLimits& limits) {
  const std::vector<std::string> o = row.run_replicas > 0
                                         ? replica_overrides(spec, row.point, row.run_replicas)
                                         : spec.overrides(row.point);
  return probe_point(spec, o, limits, &tokens);
}

nlohmann::json point_to_json(const PointResult& r) {
  nlohmann::json j;
  for_each_field(r, [&](const Field& f, const auto& v) {
    if (!(f.outputs & k_wire)) return;
    if constexpr (requires { v.has_value(); })
      j[std::string(f.name)] = v ? nlohmann::json(*v) : nlohmann::json();
    else
      j[std::string(f.name)] = v;
  });
  return j;
}

PointResult point_from_json(const nlohmann::json& j) {
  PointResult r;
  for_each_field(r, [&](const Field& f, auto& v) {
    if (!(f.outputs & k_wire)) return;
    const nlohmann::json& e = j.at(std::string(f.name));
    if constexpr (requires { v.reset(); }) {
      if (e.is_null())
        v.reset();
      else
        v = e.get<typename std::decay_t<decltype(v)>::value_type>();
    } else {
      v = e.get<std::decay_t<decltype(v)>>();
    }
  });
  return r;
}

}  // namespace servesim
