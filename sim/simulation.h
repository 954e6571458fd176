#pragma once
// The discrete-event engine: one replica, one batch in flight at a time.
//
// Events are ordered by (time, kind, sequence number given when scheduled). Kinds at one instant
// run in this order:
//   0 step end  - the step's tokens are credited and finished requests may be released;
//   1 arrival   - the request joins the queue (or is rejected if it can never be served);
//   2 timer     - a wake-up a scheduler asked for (dynamic batching's queue delay);
//   3 schedule  - if the engine is idle, the scheduler plans the next step.
// So the scheduling decision at an instant sees every arrival and completion at that instant,
// and an idle engine starts a step the instant a request can be scheduled. Only what can happen
// next is queued: the in-flight step's end, the next arrival, a timer.
#include <cstdint>
#include <memory>
#include <chrono>
#include <csignal>
#include <queue>
#include <string>
#include <stdexcept>
#include <vector>

#include "models/step_time_model.h"
#include "schedulers/scheduler.h"
#include "sim/batch_state.h"
#include "sim/recorder.h"
#include "traces/workload_source.h"

namespace servesim {

struct Components {
  std::unique_ptr<WorkloadSource> source;
  std::unique_ptr<StepTimeModel> step_time;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<KvManager> kv;
};

/// Counters gathered while running; the summary is computed from these and the requests.
struct RunStats {
  int64_t steps = 0;
  int64_t busy_ns = 0;               ///< total duration of all steps
  int64_t seat_steps = 0;            ///< sum over steps of sequences in the step
  int64_t prefill_tokens = 0;        ///< prompt tokens computed, recomputation included
  int64_t decode_tokens = 0;         ///< tokens produced by decode entries
  int64_t peak_kv_used_tokens = 0;
  int64_t kv_capacity_tokens = 0;
  int64_t peak_in_flight = 0;        ///< most requests held at once (queued or running)
  std::optional<KvManager::PrefixStats> prefix;  ///< when the KV policy caches prefixes
  /// What the workload source dropped or changed (WorkloadSource::counters).
  std::vector<std::pair<std::string, int64_t>> workload_counters;
  Time end;                          ///< time of the last event
  // Summed only over steps whose model reports a cost (StepTimeModel::cost), per accelerator.
  int64_t costed_steps = 0;
  int64_t bandwidth_bound_steps = 0;
  double bytes_moved = 0;
  double flops = 0;
  double peak_bytes_per_s = 0;       ///< from the model's cost; constant over a run
  double peak_flops_per_s = 0;
  /// Empty when the run went to completion; otherwise why it stopped early ("simulated time
  /// limit", "wall time limit", "interrupted"), and the results are partial.
  std::string stopped_by;
};

/// Bounds on a run. A bounded run stops at the first event past a bound and reports what it
/// has: finished requests are summarised, the rest are listed as unfinished.
struct RunLimits {
  Time max_sim_time = Time::max();
  double max_wall_s = 0;                        ///< 0: none
  const volatile std::sig_atomic_t* interrupt = nullptr;  ///< stop when it becomes non-zero
};

/// An engine invariant broke (a bug, never bad input): the message names the step, the request
/// and the state.
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class Simulation {
 public:
  /// With `check`, every step verifies the engine's invariants (see check_invariants) and a
  /// violation throws InvariantError; it costs time proportional to the queue and batch.
  explicit Simulation(Components c, bool check = false, RunLimits limits = {});
  /// Every request is handed to each recorder when it leaves (see recorder.h).
  /// REQUIRES: `r` outlives run().
  void add_recorder(RequestRecorder& r) { m_recorders.push_back(&r); }
  /// Runs to completion. Throws std::logic_error if a request is left unserved (a scheduler
  /// bug), InputError for bad input found while streaming the workload.
  void run();

  [[nodiscard]] const RunStats& stats() const { return m_stats; }

 private:
  enum class Kind : uint8_t { StepEnd = 0, Arrival = 1, Timer = 2, Schedule = 3 };
  struct Event {
    Time t;
    Kind kind;
    uint64_t seq;
    bool operator>(const Event& o) const {
      if (t != o.t) return t > o.t;
      if (kind != o.kind) return kind > o.kind;
      return seq > o.seq;
    }
  };

  void run_events();
  void post(Time t, Kind k);
  void post_schedule();
  /// Plans the next step now if nothing else can happen at this instant, else posts Schedule.
  void schedule();
  void pull_next_arrival();
  /// arrivals_done: the source has nothing more and no request made ready is still to arrive.
  void update_arrivals_done();
  /// Takes the request due now: the source's next, or a request made ready by a departure,
  /// whichever comes first by (arrival, id).
  [[nodiscard]] RequestSpec& due_arrival();
  void on_arrival();
  void try_start_step();
  void finish_step();
  void check_all_served() const;
  /// Hands a departed request to the recorders and frees its slot.
  void depart(uint32_t slot);
  /// A bounded run stopped: every request still held is recorded as unfinished.
  void record_unfinished();
  /// The reason to stop before the event at `t`, or nullptr to go on.
  [[nodiscard]] const char* stop_reason(Time t, uint64_t events);
  /// KV use within capacity and equal to what the running requests hold; queued requests hold
  /// nothing; each request in at most one of queue and batch, in a state that matches; no
  /// request has produced more tokens than it asked for.
  void check_invariants(const char* when);

  Components m_c;
  BatchState m_state;
  RunStats m_stats;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> m_events;
  uint64_t m_seq = 0;
  RequestSpec m_next;          // the arrival already posted
  bool m_next_posted = false;  // m_next holds a posted arrival
  // Reactive sources: requests made ready by departures, a min-heap by (arrival, id), each
  // with its arrival posted; m_newly_ready is on_depart's scratch list.
  std::vector<RequestSpec> m_ready;
  std::vector<RequestSpec> m_newly_ready;
  bool m_reactive = false;
  bool m_stopping = false;     // a bounded run is recording what is left
  bool m_busy = false;         // a step is in flight
  bool m_schedule_posted = false;
  Time m_timer_at = Time::max();
  bool m_check = false;
  RunLimits m_limits;
  std::chrono::steady_clock::time_point m_wall_start;
  std::vector<uint8_t> m_seen;  // check mode: where each request was found
  std::vector<RequestRecorder*> m_recorders;
};

}  // namespace servesim
