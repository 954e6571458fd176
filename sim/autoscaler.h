#pragma once
// Autoscaling over time (docs/autoscaling.md): `cluster.autoscale` adds replicas to, and takes
// them from, the live set of a `cluster.replicas` cluster on a signal measured every window.
//
// The cluster is built with `max` replicas; `cluster.replicas` of them are live at time 0, the
// rest parked. Each replica is in one phase:
//   parked       - not paid for, not routable, holds nothing;
//   provisioning - paid for, not routable, for provision_s; then live;
//   live         - paid for and routable;
//   draining     - paid for, not routable; it finishes what it holds, then is parked.
// Every window_s the engine measures the signal over the live replicas and asks decide() for a
// change; a change is at least cooldown_s after the previous one (either way). The autoscaler
// keeps the books: the time each replica is paid for (its cost and its idle power), the count
// of each phase over time (the timeline) and the scale events.
//
// The engine's side (the tick, the replica picked to drain, the routing flags) is in
// sim/autoscale_engine.cpp; routers see only live replicas (Simulation::set_routable).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/request.h"
#include "core/time.h"
#include "sim/slo.h"

namespace servesim {

enum class ScaleSignal : uint8_t {
  Utilisation,  ///< live replicas' mean busy share over the window
  Queue,        ///< requests held (queued or running) per live replica, at the decision
  Kv,           ///< live replicas' mean share of KV capacity in use, at the decision
  Slo,          ///< SLO attainment of the requests that left in the window
};
[[nodiscard]] const char* signal_name(ScaleSignal s);

/// The checked `cluster.autoscale` section.
struct AutoscaleSpec {
  ScaleSignal signal = ScaleSignal::Utilisation;
  double target = 0;  ///< per live replica (utilisation, queue, kv) or the attainment (slo)
  Time window;        ///< the decision interval; the utilisation and slo window
  uint32_t min = 1, max = 1;
  uint32_t initial = 1;  ///< cluster.replicas: live at time 0
  Time provision;        ///< from a scale-up's decision to the replica being live
  Time cooldown;         ///< least time between two scale events
  bool drain = true;     ///< false: scale down only an idle replica (none drains)
  /// The `slo` section's targets (signal slo only): ttft, tpot and e2e are checked.
  std::optional<SloTargets> slo;
  int64_t accelerators_per_replica = 1;
  /// The catalogue's price of a replica for an hour (accelerators x price); 0: not known.
  double usd_per_replica_hour = 0;
  std::string price_tier;
};

/// Reads `cluster.autoscale` (in `cluster`, whose `replicas` is `initial`), or null without it.
/// Throws InputError naming the key for bad input.
[[nodiscard]] std::shared_ptr<AutoscaleSpec> read_autoscale(const Cfg& cluster, int64_t initial);

enum class ReplicaPhase : uint8_t { Parked, Provisioning, Live, Draining };

/// One row of the timeline (autoscale.csv): the phases' counts after `event` at `t`.
struct AutoscaleRow {
  Time t;
  const char* event = "";  ///< start, tick, up, live, drain, parked, end
  double signal = 0;       ///< the last decision's signal (NaN before the first)
  uint32_t replica = 0;    ///< the replica the event concerns (tick, start, end: 0)
  uint32_t live = 0, provisioning = 0, draining = 0;
};

/// A run's autoscaling figures (RunStats::autoscale).
struct AutoscaleStats {
  std::shared_ptr<const AutoscaleSpec> spec;
  double horizon_s = 0;                 ///< from 0 to the run's end
  double replica_seconds = 0;           ///< integral of the paid replicas over the horizon
  std::vector<double> held_s;           ///< per replica: the time it was paid for
  int64_t scale_ups = 0;                ///< replicas provisioned
  int64_t scale_downs = 0;              ///< replicas drained
  uint32_t min_held = 0, max_held = 0;  ///< paid replicas (provisioning, live, draining)
  uint32_t min_live = 0, max_live = 0;
  std::vector<AutoscaleRow> timeline;
};

/// The books and the decision rule; knows nothing of the engine.
class Autoscaler {
 public:
  Autoscaler(std::shared_ptr<const AutoscaleSpec> spec, uint32_t replicas);
  [[nodiscard]] const AutoscaleSpec& spec() const { return *m_spec; }
  [[nodiscard]] ReplicaPhase phase(uint32_t rep) const { return m_phase[rep]; }
  [[nodiscard]] uint32_t count(ReplicaPhase p) const { return m_count[static_cast<int>(p)]; }

  /// The change in replicas the signal asks for at `now`: > 0 provision that many, < 0 drain
  /// that many, 0 none (within the cooldown, no signal, or at a bound). `signal` is NaN when
  /// there was nothing to measure (slo: no request left in the window).
  [[nodiscard]] int32_t decide(double signal, Time now) const;
  /// Replica `rep` enters `p` at `now` (scale events are counted, the cooldown restarts on up
  /// and drain); a timeline row records it.
  void set_phase(uint32_t rep, ReplicaPhase p, Time now);
  /// A decision's row (after its changes).
  void note_tick(Time now, double signal);
  /// SLO signal: a request left (state Released when served); `r` is in the client's view.
  void note_departure(const Request& r);
  /// The window's attainment (NaN when none left), and a new window begins.
  [[nodiscard]] double take_attainment();
  /// Closes the books at the run's end.
  [[nodiscard]] AutoscaleStats finish(Time end);

 private:
  void add_row(Time now, const char* event, uint32_t rep);
  void account(Time now);  ///< integrates the paid replicas up to `now`

  std::shared_ptr<const AutoscaleSpec> m_spec;
  std::vector<ReplicaPhase> m_phase;
  std::vector<Time> m_since;  ///< when each paid replica's current paid stretch began
  uint32_t m_count[4] = {0, 0, 0, 0};
  Time m_last_change = Time::max();  ///< the last scale event (max: none yet)
  Time m_accounted;                  ///< replica_seconds covers [0, m_accounted]
  double m_signal;
  int64_t m_left = 0, m_met = 0;  ///< slo window
  AutoscaleStats m_stats;
};

}  // namespace servesim
