#pragma once
// Replica failures and recoveries (docs/failures.md): `cluster.failures`.
//
// A replica is down over intervals: the scripted ones (`script`: replica, at_s, down_s) and,
// with `mtbf_h`, drawn ones. The drawn process is per replica and runs on its own clock: up for
// an exponential time of mean mtbf_h / its accelerators (any accelerator failing stops the
// replica), then down for an exponential time of mean mttr_h, and again; its draws come from
// the run's seed and the replica's index only, so routing, load and the other replicas never
// change them. Overlapping intervals of one replica merge into one failure.
//
// While down a replica is not routable (Simulation::set_routable), steps nothing and draws no
// power. When it fails, its step in flight is lost, every request it holds frees its KV at once
// and, by `on_failure`, is retried on a live replica (`retry`: it starts over, prefill and all,
// keeping its arrival time, up to `max_retries` times) or ends with status `failed`; its prefix
// cache is lost. A request arriving (or retried) while every replica is down waits at the router
// until one recovers (`retry`) or fails at once (`fail`).
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/config.h"
#include "core/random.h"
#include "core/request.h"
#include "core/time.h"

namespace servesim {

/// The checked `cluster.failures` section.
struct FailureSpec {
  struct Outage {
    uint32_t replica = 0;
    Time at;    ///< when it goes down
    Time down;  ///< for how long
  };
  std::vector<Outage> script;  ///< in (replica, at) order
  double mtbf_h = 0;           ///< mean time between failures of one accelerator; 0: none drawn
  double mttr_h = 0;           ///< mean time to repair
  bool retry = true;           ///< on_failure: retry (else fail)
  int32_t max_retries = 3;
  /// Each replica's accelerators (Scenario::replica_accelerators): its drawn failure rate is
  /// this many times one accelerator's. Set once the replicas are known.
  std::vector<int64_t> accelerators;
};

/// cluster.failures of `root`, or null without it. `replicas`: the cluster's replica count
/// (script entries name one of them). Throws InputError naming the key for bad input.
[[nodiscard]] std::shared_ptr<FailureSpec> read_failures(const Cfg& root, int64_t replicas);

/// What failures did to a run (RunStats::failures, summary.json's `failures`).
struct FailureStats {
  int64_t failures = 0;         ///< replicas going down (merged intervals)
  double downtime_s = 0;        ///< replica-seconds down, within the run
  double replica_time_s = 0;    ///< replica-seconds in the run (replicas x its end)
  double availability = 1;      ///< 1 - downtime / replica time
  int64_t retries = 0;          ///< requests sent again after their replica failed
  int64_t failed_requests = 0;  ///< requests ended with status failed
  int64_t lost_tokens = 0;      ///< KV tokens computed on a failed replica and lost with it
  int64_t lost_steps = 0;       ///< steps in flight when their replica failed
  int64_t waited_requests = 0;  ///< requests that waited at the router with every replica down
};

/// The run's failure state: each replica's next change (down or up) and the requests waiting
/// at the router.
class FailureClock {
 public:
  FailureClock(std::shared_ptr<const FailureSpec> spec, uint32_t replicas, uint64_t seed);
  [[nodiscard]] const FailureSpec& spec() const { return *m_spec; }
  /// When replica `rep` changes next (Time::max(): never).
  [[nodiscard]] Time next(uint32_t rep) const { return m_reps[rep].next; }
  [[nodiscard]] bool down(uint32_t rep) const { return m_reps[rep].down; }
  /// The change due at `now` for `rep`: it goes down (returns true) or comes up (false); its
  /// next change is worked out. REQUIRES: next(rep) == now.
  bool advance(uint32_t rep, Time now);
  /// Replica-seconds down up to `end`, and each replica's (downtime_s(rep, end)).
  [[nodiscard]] double downtime_s(uint32_t rep, Time end) const;

  std::deque<RequestSpec> waiting;  ///< at the router, every replica down, in arrival order
  FailureStats stats;

 private:
  struct Interval {
    Time from, to;
  };
  struct Rep {
    explicit Rep(uint64_t seed) : rng(seed) {}
    Rng rng;
    double rate_per_h = 0;  ///< drawn failures; 0: none
    Interval drawn{Time::max(), Time::max()};
    size_t script = 0;  ///< next script entry of this replica (index into its list)
    std::vector<Interval> scripted;
    bool down = false;
    Time next = Time::max();
    Time down_since;
    double down_s = 0;  ///< closed intervals
  };
  /// The earliest interval not yet taken (scripted or drawn); false when none is left.
  bool peek(const Rep& r, Interval& out) const;
  void take(Rep& r);
  void draw(Rep& r, Time after);

  std::shared_ptr<const FailureSpec> m_spec;
  std::vector<Rep> m_reps;
};

}  // namespace servesim
