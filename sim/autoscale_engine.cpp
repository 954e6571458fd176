// The engine's side of autoscaling (sim/autoscaler.h): the decisions every window, the replicas
// provisioned, drained and parked, and the routing flags that keep routers on live replicas.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/simulation.h"

namespace servesim {

void Simulation::setup_autoscale() {
  if (!m_c.pools.empty())
    throw std::logic_error("cluster.autoscale with pools: refused when the config is read");
  if (m_c.autoscale->max != m_reps.size())
    throw std::logic_error("an autoscaled cluster is built with autoscale.max replicas");
  m_autoscale.emplace(m_c.autoscale, static_cast<uint32_t>(m_reps.size()));
  for (uint32_t i = 0; i < m_reps.size(); ++i)
    set_routable(i, m_autoscale->phase(i) == ReplicaPhase::Live);
  m_autoscale_busy_ns.assign(m_reps.size(), 0);
  post(Event::autoscale(Time() + m_c.autoscale->window, Event::k_autoscale_tick));
}

double Simulation::autoscale_signal() {
  const AutoscaleSpec& spec = m_autoscale->spec();
  if (spec.signal == ScaleSignal::Slo) return m_autoscale->take_attainment();
  double sum = 0;
  uint32_t live = 0;
  const double window_ns = static_cast<double>(spec.window.count_ns());
  for (uint32_t i = 0; i < m_reps.size(); ++i) {
    if (m_autoscale->phase(i) != ReplicaPhase::Live) continue;
    ++live;
    const BatchState& st = m_reps[i].state;
    switch (spec.signal) {
      case ScaleSignal::Utilisation: {
        // A step's time is counted when it starts: a window's share may pass 1 by a step.
        const int64_t busy = m_stats.replicas[i].busy_ns - m_autoscale_busy_ns[i];
        sum += std::min(1.0, static_cast<double>(busy) / window_ns);
        break;
      }
      case ScaleSignal::Queue:
        sum += static_cast<double>(st.waiting().size() + st.running().size());
        break;
      case ScaleSignal::Kv:
        sum += static_cast<double>(st.kv().used_tokens()) /
               static_cast<double>(std::max<int64_t>(1, st.kv().capacity_tokens()));
        break;
      case ScaleSignal::Slo:
        break;
    }
  }
  for (uint32_t i = 0; i < m_reps.size(); ++i) m_autoscale_busy_ns[i] = m_stats.replicas[i].busy_ns;
  return live > 0 ? sum / live : std::numeric_limits<double>::quiet_NaN();
}

void Simulation::park_if_drained(uint32_t rep) {
  if (m_autoscale->phase(rep) == ReplicaPhase::Draining && m_reps[rep].state.live() == 0)
    m_autoscale->set_phase(rep, ReplicaPhase::Parked, m_now);
}

namespace {

/// Requests a replica holds, queued or running.
size_t held(const BatchState& st) { return st.waiting().size() + st.running().size(); }

}  // namespace

void Simulation::on_autoscale(uint32_t what) {
  // After the last request left, nothing is decided or provisioned: the books close at the
  // run's end (a decision due then was posted while work was left).
  if (!work_left()) return;
  if (what != Event::k_autoscale_tick) {
    m_autoscale->set_phase(what, ReplicaPhase::Live, m_now);
    set_routable(what, true);
    return;
  }
  for (uint32_t i = 0; i < m_reps.size(); ++i) park_if_drained(i);  // timeouts may empty one
  const double signal = autoscale_signal();
  const int32_t change = m_autoscale->decide(signal, m_now);
  m_autoscale->note_tick(m_now, signal);
  const AutoscaleSpec& spec = m_autoscale->spec();
  for (int32_t k = 0; k < change; ++k) {  // the parked replica with the lowest index
    uint32_t rep = 0;
    while (m_autoscale->phase(rep) != ReplicaPhase::Parked) ++rep;
    m_autoscale->set_phase(rep, ReplicaPhase::Provisioning, m_now);
    if (spec.provision == Time::ns(0)) {
      m_autoscale->set_phase(rep, ReplicaPhase::Live, m_now);
      set_routable(rep, true);
    } else {
      post(Event::autoscale(m_now + spec.provision, rep));
    }
  }
  for (int32_t k = 0; k > change; --k) {
    // The least loaded live replica (ties: the highest index, so low indices stay live); with
    // drain: false only an idle one, and none when none is idle.
    uint32_t best = std::numeric_limits<uint32_t>::max();
    for (uint32_t i = 0; i < m_reps.size(); ++i) {
      if (m_autoscale->phase(i) != ReplicaPhase::Live) continue;
      if (!spec.drain && m_reps[i].state.live() != 0) continue;
      if (best == std::numeric_limits<uint32_t>::max() ||
          held(m_reps[i].state) <= held(m_reps[best].state))
        best = i;
    }
    if (best == std::numeric_limits<uint32_t>::max()) break;
    m_autoscale->set_phase(best, ReplicaPhase::Draining, m_now);
    set_routable(best, false);
    park_if_drained(best);
  }
  if (work_left()) post(Event::autoscale(m_now + spec.window, Event::k_autoscale_tick));
}

}  // namespace servesim
