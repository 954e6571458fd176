#include "sim/autoscaler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim {

const char* signal_name(ScaleSignal s) {
  switch (s) {
    case ScaleSignal::Utilisation:
      return "utilisation";
    case ScaleSignal::Queue:
      return "queue";
    case ScaleSignal::Kv:
      return "kv";
    case ScaleSignal::Slo:
      return "slo";
  }
  return "?";
}

std::shared_ptr<AutoscaleSpec> read_autoscale(const Cfg& cluster, int64_t initial) {
  const std::optional<Cfg> a = cluster.optional_child("autoscale");
  if (!a) return nullptr;
  auto s = std::make_shared<AutoscaleSpec>();
  const std::string signal = a->get_choice("signal", {"kv", "queue", "slo", "utilisation"});
  s->signal = signal == "kv"      ? ScaleSignal::Kv
              : signal == "queue" ? ScaleSignal::Queue
              : signal == "slo"   ? ScaleSignal::Slo
                                  : ScaleSignal::Utilisation;
  // A share (utilisation, kv, attainment) is at most 1; a queue is requests per replica.
  s->target = a->get_real("target", {0.0, s->signal == ScaleSignal::Queue ? 1e6 : 1.0, true});
  s->window = Time::from_seconds(a->get_real("window_s", 60.0, {0.0, 1e6, true}));
  s->min = static_cast<uint32_t>(a->get_int("min", 1, {1, 4096}));
  s->max = static_cast<uint32_t>(a->get_int("max", {1, 4096}));
  s->provision = Time::from_seconds(a->get_real("provision_s", 120.0, {0.0, 1e6, false}));
  s->cooldown = Time::from_seconds(a->get_real("cooldown_s", 300.0, {0.0, 1e6, false}));
  s->drain = a->get_bool("drain", true);
  if (s->max < s->min)
    a->fail("max", fmt::format("= {} is below min = {}: max must be at least min", s->max, s->min));
  if (initial < s->min || initial > s->max)
    cluster.fail("replicas", fmt::format("= {} are live at the start of an autoscaled run, so it "
                                         "must be from autoscale.min ({}) to autoscale.max ({})",
                                         initial, s->min, s->max));
  s->initial = static_cast<uint32_t>(initial);
  return s;
}

Autoscaler::Autoscaler(std::shared_ptr<const AutoscaleSpec> spec, uint32_t replicas)
    : m_spec(std::move(spec)),
      m_phase(replicas, ReplicaPhase::Parked),
      m_since(replicas),
      m_signal(std::numeric_limits<double>::quiet_NaN()) {
  m_count[static_cast<int>(ReplicaPhase::Parked)] = replicas;
  m_stats.spec = m_spec;
  m_stats.held_s.assign(replicas, 0.0);
  for (uint32_t i = 0; i < m_spec->initial && i < replicas; ++i) {
    m_phase[i] = ReplicaPhase::Live;
    --m_count[static_cast<int>(ReplicaPhase::Parked)];
    ++m_count[static_cast<int>(ReplicaPhase::Live)];
  }
  m_stats.min_held = m_stats.max_held = m_stats.min_live = m_stats.max_live =
      count(ReplicaPhase::Live);
  add_row(Time(), "start", 0);
}

int32_t Autoscaler::decide(double signal, Time now) const {
  if (std::isnan(signal)) return 0;
  if (m_last_change != Time::max() && now - m_last_change < m_spec->cooldown) return 0;
  const auto live = static_cast<int64_t>(count(ReplicaPhase::Live));
  const auto provisioning = static_cast<int64_t>(count(ReplicaPhase::Provisioning));
  const auto parked = static_cast<int64_t>(count(ReplicaPhase::Parked));
  const double target = m_spec->target;
  int64_t desired = 0;
  if (m_spec->signal == ScaleSignal::Slo) {
    // Below target: one more. At or above halfway from the target to 1: one fewer (the gap is
    // the hysteresis that keeps a met target from flapping).
    desired = signal < target                  ? live + provisioning + 1
              : signal >= (1.0 + target) / 2.0 ? live - 1
                                               : live + provisioning;
  } else {
    // Enough replicas for the measured per-replica signal to come down to the target (as
    // Kubernetes' horizontal autoscaler); 1e-9 keeps an exact ratio from rounding up.
    desired = static_cast<int64_t>(std::ceil(static_cast<double>(live) * signal / target - 1e-9));
  }
  desired = std::clamp<int64_t>(desired, m_spec->min, m_spec->max);
  if (desired > live + provisioning)
    return static_cast<int32_t>(std::min(desired - live - provisioning, parked));
  // Down only once nothing is provisioning: a replica on its way is the last decision's answer.
  if (desired < live && provisioning == 0) return static_cast<int32_t>(desired - live);
  return 0;
}

void Autoscaler::account(Time now) {
  if (now <= m_accounted) return;
  const uint32_t held =
      count(ReplicaPhase::Provisioning) + count(ReplicaPhase::Live) + count(ReplicaPhase::Draining);
  m_stats.replica_seconds += static_cast<double>(held) * (now - m_accounted).seconds();
  m_accounted = now;
}

void Autoscaler::set_phase(uint32_t rep, ReplicaPhase p, Time now) {
  account(now);
  const ReplicaPhase old = m_phase[rep];
  const bool was_paid = old != ReplicaPhase::Parked;
  const bool paid = p != ReplicaPhase::Parked;
  if (was_paid && !paid) m_stats.held_s[rep] += (now - m_since[rep]).seconds();
  if (!was_paid && paid) m_since[rep] = now;
  --m_count[static_cast<int>(old)];
  ++m_count[static_cast<int>(p)];
  m_phase[rep] = p;
  const char* event = "live";
  if (p == ReplicaPhase::Provisioning) {
    ++m_stats.scale_ups;
    m_last_change = now;
    event = "up";
  } else if (p == ReplicaPhase::Draining) {
    ++m_stats.scale_downs;
    m_last_change = now;
    event = "drain";
  } else if (p == ReplicaPhase::Parked) {
    event = "parked";
  }
  const uint32_t held =
      count(ReplicaPhase::Provisioning) + count(ReplicaPhase::Live) + count(ReplicaPhase::Draining);
  m_stats.min_held = std::min(m_stats.min_held, held);
  m_stats.max_held = std::max(m_stats.max_held, held);
  m_stats.min_live = std::min(m_stats.min_live, count(ReplicaPhase::Live));
  m_stats.max_live = std::max(m_stats.max_live, count(ReplicaPhase::Live));
  add_row(now, event, rep);
}

void Autoscaler::note_tick(Time now, double signal) {
  m_signal = signal;
  add_row(now, "tick", 0);
}

void Autoscaler::note_departure(const Request& r) {
  ++m_left;
  if (r.state != RequestState::Released || !m_spec->slo) return;
  const SloTargets& slo = *m_spec->slo;
  // The run's own verdict (metrics/metrics.cpp) on TTFT, mean TPOT and E2E, in seconds.
  const bool ttft =
      !slo.ttft_ms || (r.first_token - r.spec.arrival).seconds() * 1e3 <= *slo.ttft_ms;
  const bool tpot = !slo.tpot_ms || r.spec.output_tokens <= 1 ||
                    (r.last_token - r.first_token).seconds() * 1e3 /
                            static_cast<double>(r.spec.output_tokens - 1) <=
                        *slo.tpot_ms;
  const bool e2e = !slo.e2e_ms || (r.release - r.spec.arrival).seconds() * 1e3 <= *slo.e2e_ms;
  m_met += ttft && tpot && e2e;
}

double Autoscaler::take_attainment() {
  const double a = m_left > 0 ? static_cast<double>(m_met) / static_cast<double>(m_left)
                              : std::numeric_limits<double>::quiet_NaN();
  m_left = m_met = 0;
  return a;
}

AutoscaleStats Autoscaler::finish(Time end) {
  account(end);
  for (uint32_t i = 0; i < m_phase.size(); ++i)
    if (m_phase[i] != ReplicaPhase::Parked && end > m_since[i])
      m_stats.held_s[i] += (end - m_since[i]).seconds();
  m_stats.horizon_s = end.seconds();
  add_row(end, "end", 0);
  return std::move(m_stats);
}

void Autoscaler::add_row(Time now, const char* event, uint32_t rep) {
  m_stats.timeline.push_back({now, event, m_signal, rep, count(ReplicaPhase::Live),
                              count(ReplicaPhase::Provisioning), count(ReplicaPhase::Draining)});
}

}  // namespace servesim
