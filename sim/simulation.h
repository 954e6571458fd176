#pragma once
// The discrete-event engine: one or more replicas (a cluster behind a router), each with one
// batch in flight at a time.
//
// Events (sim/event_queue.h) are ordered by (time, phase, order posted); at one instant step
// ends come first, then KV transfers, arrivals, timers, and last the scheduling of idle
// replicas. So the scheduling decision at an instant sees every arrival and completion at that
// instant, and an idle engine starts a step the instant a request can be scheduled. Only what
// can happen next is queued: each replica's in-flight step's end and timer, the next arrival.
//
// Replicas are a list (Components::replicas), one for a single engine. In a cluster an
// arriving request reaches the router (after cluster.router.delay_ms, an event of the arrival
// phase too), which picks a replica from the replicas' loads; each replica has its own
// scheduler, KV memory and step-time model, and steps on its own. The scheduler sees its
// replica's batch through SchedulerView (core/batch_state.h), without the engine's operations.
//
// With prefill/decode pools (docs/cluster.md#disaggregation) a prefill replica's released
// request keeps its KV while the transfer runs: KvTransfers (sim/transfers.h) keeps the
// transfers' books and sim/disagg_engine.cpp the engine's side. Transfer events come before
// arrivals so a decode replica plans knowing every KV delivered at its instant. Runs without
// disaggregation post no transfer event, so their order is as it always was.
#include <chrono>
#include <csignal>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/batch_state.h"
#include "core/kv/kv_tiers.h"
#include "core/quantiles.h"
#include "models/step_time_model.h"
#include "schedulers/router.h"
#include "schedulers/scheduler.h"
#include "sim/admission.h"
#include "sim/autoscaler.h"
#include "sim/decode_streak.h"
#include "sim/event_queue.h"
#include "sim/failures.h"
#include "sim/lora.h"
#include "sim/pipeline_engine.h"
#include "sim/pool.h"
#include "sim/recorder.h"
#include "sim/speculative.h"
#include "sim/step_observer.h"
#include "sim/transfers.h"
#include "traces/workload_source.h"

namespace servesim {

/// One replica's engine parts.
struct ReplicaParts {
  /// A step-time model is a pure function of the step's shape, so replicas alike share one.
  std::shared_ptr<const StepTimeModel> step_time;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<KvManager> kv;
};

class Topology;  // sim/topology.h

struct Components {
  std::unique_ptr<WorkloadSource> source;
  /// Every replica, in order: one for a single engine, or a cluster's.
  std::vector<ReplicaParts> replicas;
  std::unique_ptr<Router> router;  ///< required with more than one replica
  Time router_delay;               ///< from arrival to the router's decision
  Time load_refresh;               ///< 0: the router sees live loads; else a snapshot this old
  /// cluster.pools, in replica order; empty for a single engine or `cluster.replicas`.
  std::vector<PoolSpec> pools;
  /// Disaggregated (prefill and decode pools): picks a decode replica, and the links between.
  std::unique_ptr<Router> decode_router;
  std::shared_ptr<const Topology> topology;
  /// The `speculative` section (sim/speculative.h), null without it; every replica speculates.
  std::shared_ptr<const SpeculativeSpec> speculative;
  /// The `lora` section (sim/lora.h), null without it; every replica serves the adapters.
  std::shared_ptr<const LoraSpec> lora;
  uint64_t seed = 1;  ///< the run's seed, for the acceptance draws
  /// The `admission` and `abandonment` sections (sim/admission.h), null without them.
  std::shared_ptr<const AdmissionSpec> admission;
  /// cluster.autoscale (sim/autoscaler.h), null without it: `replicas` holds its max.
  std::shared_ptr<const AutoscaleSpec> autoscale;
  /// cluster.failures (sim/failures.h), null without it.
  std::shared_ptr<const FailureSpec> failures;
};

/// One replica's share of a run (RunStats::replicas). The MPI ranks send it field by field
/// (sim/parallel_ranks.cpp's each_scalar): a new field is added there too.
struct ReplicaStats {
  int64_t routed = 0;  ///< requests the router sent here
  int64_t steps = 0;
  int64_t busy_ns = 0;
  int64_t seat_steps = 0;
  int64_t peak_kv_used_tokens = 0;
  int64_t kv_capacity_tokens = 0;
  uint32_t pool = 0;       ///< index in Components::pools (0 without pools)
  int64_t handed_off = 0;  ///< prefill pools: requests whose KV left for a decode replica
  int64_t received = 0;    ///< decode pools: transferred requests admitted here
  /// Sum over steps of step time x activity, in seconds (metrics/energy.h): a step whose model
  /// reports a cost counts min(step time, its bytes / peak bandwidth, or its flops / peak
  /// FLOP/s if longer); a step without a cost counts its whole time (activity 1).
  double active_s = 0;
  /// Steps whose model reports a cost, and their sums (RunStats's, which add these up in
  /// replica order: the same in the sequential and the parallel engine).
  int64_t costed_steps = 0, bandwidth_bound_steps = 0;
  double bytes_moved = 0, flops = 0;
  double down_s = 0;  ///< time down within the run (cluster.failures), in seconds
  /// Pipelined step models (sim/pipeline_engine.h): P (0: not pipelined), whether the engine
  /// schedules the micro-batches, each stage's busy time, and the sum over steps (batches) of
  /// micro-batches x time in flight.
  int32_t pipeline_stages = 0;
  bool micro_batches = false;
  std::vector<int64_t> stage_busy_ns;
  double micro_batch_ns = 0;
};

/// Counters gathered while running; the summary is computed from these and the requests.
struct RunStats {
  int64_t steps = 0;
  int64_t busy_ns = 0;         ///< total duration of all steps
  int64_t seat_steps = 0;      ///< sum over steps of sequences in the step
  int64_t prefill_tokens = 0;  ///< prompt tokens computed, recomputation included
  int64_t peak_kv_used_tokens = 0;
  int64_t kv_capacity_tokens = 0;
  int64_t peak_in_flight = 0;  ///< most requests held at once (queued or running)
  /// Steps run as a decode streak (sim/decode_streak.h): the engine's own figure, written to no
  /// output (a streak changes no result).
  int64_t streak_steps = 0;
  /// Of those, the steps run by the loop's quiet path (Simulation::quiet_streak_steps): the
  /// engine's own figure too.
  int64_t streak_quiet_steps = 0;
  /// Streaks taken up again after the ordinary step where their KV ran short
  /// (Simulation::resume_streak) instead of captured afresh: the engine's own figure too.
  int64_t streak_resumes = 0;
  /// Per replica; one entry for a single engine. The totals above sum them (busy_ns and
  /// seat_steps over all replicas; peak_kv_used_tokens is the sum of each replica's peak).
  std::vector<ReplicaStats> replicas;
  std::vector<PoolSpec> pools;                   ///< Components::pools (per-pool totals)
  std::optional<KvTransferStats> kv_transfer;    ///< with prefill/decode pools
  std::optional<KvManager::PrefixStats> prefix;  ///< when the KV policy caches prefixes
  std::optional<OffloadStats> offload;           ///< with kv.offload
  std::optional<SpeculativeStats> speculative;   ///< with a `speculative` section
  std::optional<LoraStats> lora;                 ///< with a `lora` section
  std::optional<AutoscaleStats> autoscale;       ///< with cluster.autoscale
  std::optional<FailureStats> failures;          ///< with cluster.failures
  /// What the workload source dropped or changed (WorkloadSource::counters).
  std::vector<std::pair<std::string, int64_t>> workload_counters;
  /// The workload's class names (WorkloadSource::class_names); empty: no named class.
  std::vector<std::string> class_names;
  /// The workload's tenant names (WorkloadSource::tenant_names); empty: no named tenant.
  std::vector<std::string> tenant_names;
  Time end;  ///< time of the last event
  // Summed only over steps whose model reports a cost (StepTimeModel::cost), per accelerator.
  int64_t costed_steps = 0;
  int64_t bandwidth_bound_steps = 0;
  double bytes_moved = 0;
  double flops = 0;
  double peak_bytes_per_s = 0;  ///< from the model's cost; constant over a run
  double peak_flops_per_s = 0;
  /// Empty when the run went to completion; otherwise why it stopped early ("simulated time
  /// limit", "wall time limit", "interrupted"), and the results are partial.
  std::string stopped_by;
};

/// Bounds on a run. A bounded run stops at the first event past a bound and reports what it
/// has: finished requests are summarised, the rest are listed as unfinished.
struct RunLimits {
  Time max_sim_time = Time::max();
  double max_wall_s = 0;  ///< 0: none
  /// Stop once more requests than this are held at once (waiting, running or preempted, all
  /// replicas together: RunStats::peak_in_flight). An open-loop workload far past capacity
  /// would otherwise queue without bound; this bounds the run's memory (a few hundred bytes a
  /// request). `servesim run --max-queued` sets it.
  int64_t max_queued = k_default_max_queued;
  static constexpr int64_t k_default_max_queued = 2'000'000;
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
  /// Every step is shown to each observer when it is planned (see step_observer.h).
  /// REQUIRES: `o` outlives run().
  void add_step_observer(StepObserver& o) {
    m_step_observers.push_back(&o);
    (o.ends_only() ? m_end_observers : m_record_observers).push_back(&o);
  }
  /// Runs to completion. Throws std::logic_error if a request is left unserved (a scheduler
  /// bug), InputError for bad input found while streaming the workload.
  void run();

  [[nodiscard]] const RunStats& stats() const { return m_stats; }
  /// The workload's class names as known so far (WorkloadSource::class_names): every request
  /// already recorded has its class here. Valid while the simulation lives.
  [[nodiscard]] const std::vector<std::string>& class_names() const {
    return m_c.source->class_names();
  }
  /// The workload's tenant names as known so far (WorkloadSource::tenant_names).
  [[nodiscard]] const std::vector<std::string>& tenant_names() const {
    return m_c.source->tenant_names();
  }

 private:
  struct Replica {
    explicit Replica(ReplicaParts p)
        : state(std::move(p.kv)),
          scheduler(std::move(p.scheduler)),
          step_time(std::move(p.step_time)) {}
    BatchState state;
    std::unique_ptr<Scheduler> scheduler;
    std::shared_ptr<const StepTimeModel> step_time;
    bool busy = false;  // a step is in flight
    bool schedule_posted = false;
    Time timer_at = Time::max();
    // Disaggregation. A prefill replica runs each request with one output token; the real
    // count, by slot, is restored when the request leaves for its decode replica.
    PoolRole role = PoolRole::Mixed;
    uint32_t pool = 0;
    std::vector<int32_t> output_tokens;
    // Failures (sim/failure_engine.cpp): down, and its step in flight lost at the failure.
    bool down = false;
    bool stale_step = false;
    Time step_end;        // of the step in flight
    DecodeStreak streak;  // sim/decode_streak.cpp
  };

  // The parallel engine (sim/parallel_engine.cpp) drives a shard's replicas through these:
  // it routes arrivals itself and hands every other event to dispatch().
  friend class ParallelSimulation;
  void run_events();
  /// Runs one event: the clock moves to its time.
  void dispatch(const Event& e);
  /// The run's totals from the replicas' and the workload's counters (after run_events).
  void finish_stats();
  void post(Event e) { m_events.post(e); }
  void post_schedule(uint32_t rep);
  /// Plans the next step now if nothing else can happen at this instant, else posts Schedule.
  void schedule(uint32_t rep);
  void pull_next_arrival();
  /// arrivals_done: the source has nothing more and no request made ready is still to arrive.
  void update_arrivals_done();
  /// True while a request is queued, running or in transfer, or an arrival is still to come.
  [[nodiscard]] bool work_left() const;
  /// Takes the request due now: the source's next, or a request made ready by a departure,
  /// whichever comes first by (arrival, id).
  [[nodiscard]] RequestSpec& due_arrival();
  /// A request reaches the router (or, with a router delay, leaves for it).
  void on_arrival();
  /// The request at the front of m_routing reaches the router after its delay.
  void on_routed();
  /// The router's choice for `spec`: the one replica, the router's among all, or with
  /// disaggregation among the prefill replicas.
  [[nodiscard]] uint32_t route(const RequestSpec& spec);
  /// The request joins replica `rep`'s queue (or is rejected there).
  void admit(uint32_t rep, const RequestSpec& spec);
  void try_start_step(uint32_t rep);
  /// The scheduler planned nothing: plan again at once when it preempted (its pass stopped at an
  /// asker that was its own victim), else wait for the wake-up time it asked for, if any.
  void on_empty_plan(uint32_t rep, bool preempted, Time wake);
  /// The step's time, costs, statistics, end event and record, from its shape.
  /// `post_end` false: the caller posts the end event (rep.step_end) itself, or ends the step
  /// at once (a decode streak's steps, sim/decode_streak.cpp).
  void launch_step(uint32_t rep, const StepShape& shape, int64_t verify_tokens,
                   int32_t prefill_sequences, int32_t decode_tokens, bool post_end = true);
  /// launch_step's body (sim/step_launch.h), inline; k_streak: a decode streak's step
  /// (sim/decode_streak.cpp), which has no verify, adapters or offload tiers; k_plain: one
  /// of streak_loop<true> (no --check, pipeline stages or step-record observers).
  template <bool k_streak, bool k_plain = false>
  void launch(uint32_t rep, const StepShape& shape, int64_t verify_tokens,
              int32_t prefill_sequences, int32_t decode_tokens, bool post_end);
  void finish_step(uint32_t rep);
  /// A token produced for `r` (in slot `slot`) at `now`, as finish_step and a streak step's
  /// admissions credit it: its first and last token times, then its finish (counted in
  /// `finished`) or its cancel point.
  void credit_token(Request& r, uint32_t slot, Time now, int32_t& finished) {
    ++r.generated_tokens;
    if (r.first_token == Time::max()) r.first_token = now;
    r.last_token = now;
    if (r.done()) {
      r.state = RequestState::Finished;
      r.finish = now;
      ++finished;
    } else if (r.spec.cancel_after_tokens > 0 && r.generated_tokens >= r.spec.cancel_after_tokens) {
      m_cancelled.push_back(slot);
    }
  }
  // Decode streaks (sim/decode_streak.cpp).
  void setup_streaks();
  [[nodiscard]] bool capture_streak(Replica& rep);
  /// The requests admitted since the last step (after the members in running()) join `rep`'s
  /// streak; false (nothing changed) when one cannot.
  [[nodiscard]] bool join_streak(Replica& rep);
  [[nodiscard]] bool streak_step(uint32_t rep);
  /// streak_step's loop; k_plain: a run without --check, pipeline stages or step-record
  /// observers, with a step-end observer and the batch's changes ended in the loop (streak_step
  /// tests the five), whose branches it then leaves out of every step.
  template <bool k_plain>
  [[nodiscard]] bool streak_loop(uint32_t rep);
  /// Starts the next step of replica `rep`'s streak (capturing one first) without posting its
  /// end; false (the streak written back where it had one) when the step must go the ordinary
  /// way.
  [[nodiscard]] bool start_streak_step(uint32_t rep);
  /// Up to `budget` iterations of streak_loop<true> (each ends the step in flight and starts
  /// the next) in which nothing but the clock and the books moves, run with the loop's state in
  /// locals; returns how many ran. See sim/decode_streak.cpp.
  int quiet_streak_steps(uint32_t rep, int64_t n, bool waiting, Time next_event, int budget);
  /// The checks, shape and start of a captured streak's next step on `rep` (of `n` members;
  /// `waiting`: its queue holds a request; `first`: the first of a run of them, whose KV held
  /// is read for the peak whatever it took); false (the streak written back) when the step
  /// must go the ordinary way.
  template <bool k_plain = false>
  [[nodiscard]] bool next_streak_step(uint32_t rep, int64_t n, bool waiting, bool first);
  /// The end of next_streak_step: the members' decodes beside `shape`'s admissions, started.
  template <bool k_plain>
  void launch_streak_step(uint32_t rep, int64_t n, int64_t step, StepShape& shape,
                          int32_t prefill_sequences, bool read_peak);
  /// Streak step `step` of `rep`, whose blocks the KV cannot give, planned as the scheduler's
  /// pass would plan it (Scheduler::preempts_newest: the newest members preempted, the others'
  /// blocks taken) and started. False (nothing changed) where it would preempt every member.
  [[nodiscard]] bool preempt_streak_members(uint32_t rep, int64_t step);
  /// Counts a streak step that ended now; true when members produced their last token in it
  /// or requests were admitted in it (settle_streak_step).
  bool end_streak_step(uint32_t rep);
  template <bool k_plain = false>
  [[nodiscard]] bool count_streak_step(uint32_t rep);  // its body, inline in streak_step's loop
  /// The members of `rep`'s streak whose last token the step just ended produced are written
  /// back and finished, the step's admissions credited; the scheduler releases the finished
  /// and they depart. The other members stay captured.
  void settle_streak_step(uint32_t rep);
  /// The KV tokens a member of streak `s` holds now.
  [[nodiscard]] static int64_t member_held(const DecodeStreak& s, const Request& r);
  void materialize(Replica& rep);
  /// materialize for the ordinary step that follows a streak step whose blocks the KV could not
  /// give: the streak's figures and each member's as written back are kept (DecodeStreak::
  /// written) for resume_streak.
  void suspend_streak(uint32_t rep);
  /// After that one ordinary step, the suspended streak of `rep` takes up again the members it
  /// decoded (the first of running(), their counts kept less the steps, the ordinary step
  /// counted as the streak's) and the others leave its figures; false (nothing changed) when
  /// none can, and the batch is captured afresh.
  [[nodiscard]] bool resume_streak(uint32_t rep);
  void materialize_streaks();
  void check_streak(uint32_t rep, const StepShape& shape) const;
  void check_all_served() const;
  /// A started step's books on its replica: the activity over `busy_s` seconds (the step, or a
  /// pipeline stage's share) and, when the model reports a cost, the cost sums.
  void add_step_cost(ReplicaStats& rs, const std::optional<StepCost>& cost, double busy_s);
  /// Tells the step observers of the step just started on `rep` (m_step_record, reused).
  void notify_step(uint32_t rep, Time duration, const StepShape& shape, int32_t prefill_sequences,
                   int32_t decode_tokens, int64_t prefill_tokens,
                   const std::optional<StepCost>& cost);
  /// notify_step's part for the observers that read the whole StepRecord.
  void notify_record(uint32_t rep, Time duration, const StepShape& shape, int32_t prefill_sequences,
                     int32_t decode_tokens, int64_t prefill_tokens,
                     const std::optional<StepCost>& cost);
  // Pipeline parallelism (sim/pipeline_engine.cpp).
  void setup_pipelines();
  /// A closed-form pipelined step of `shape` lasting `duration` started on `rep`: its books.
  void note_pipeline_step(uint32_t rep, const StepShape& shape, Time duration);
  /// micro_batches: plans a batch on `rep` and sends it into stage 0.
  void pipeline_start(uint32_t rep);
  /// micro_batches: the oldest batch of `rep` left the last stage.
  void pipeline_step_end(uint32_t rep);
  /// micro_batches: whether `rep` may take a new batch now (stage 0 free, fewer than P).
  void pipeline_refresh(uint32_t rep);
  // Disaggregation (sim/disagg_engine.cpp).
  void setup_pools();
  [[nodiscard]] bool disaggregated() const { return m_transfers.has_value(); }
  /// The one routing function: `router`'s pick among `members` (all replicas when null), on
  /// the load snapshot, taken anew when it is older than cluster.router.load_refresh_ms; a
  /// stale snapshot counts the pick as one more outstanding request there.
  [[nodiscard]] uint32_t pick(Router& router, const std::vector<uint32_t>* members,
                              const RequestSpec& spec);
  /// The prefill replica `rep` finished prefilling `slot`: its KV leaves for a decode replica.
  void hand_off(uint32_t rep, uint32_t slot);
  /// The KV of transfer `id` reached its decode replica.
  void on_delivered(uint32_t id);
  /// Admits the transfers delivered to decode replica `rep`, first come first served, while
  /// its KV can hold them.
  void admit_delivered(uint32_t rep);
  void refresh_loads();
  // Replica availability: a router picks only among routable replicas. Autoscaling
  // (provisioning, draining or parked replicas) and failures (a replica down) clear the flag;
  // a replica that is not routable still finishes what it holds unless its owner says so.
  /// Marks replica `rep` routable or not; the first call makes every other replica routable.
  void set_routable(uint32_t rep, bool routable);
  /// True when some replica is routable, as pick() needs (hold_at_router's question: with every
  /// replica down, a request waits at the router).
  [[nodiscard]] bool any_routable() const;
  // Autoscaling (sim/autoscale_engine.cpp).
  void setup_autoscale();
  /// An Event::autoscale: a decision, or replica `what` done provisioning.
  void on_autoscale(uint32_t what);
  /// The signal over the live replicas now (NaN: nothing to measure).
  [[nodiscard]] double autoscale_signal();
  /// A draining replica that holds nothing is parked.
  void park_if_drained(uint32_t rep);
  // Failures (sim/failure_engine.cpp).
  void setup_failures();
  /// A failure or recovery due when no work is left: dropped (the run has ended).
  [[nodiscard]] bool idle_failure_event(const Event& e) const;
  /// Replica `rep`'s failure or recovery is due now.
  void on_failure_timer(uint32_t rep);
  void fail_replica(uint32_t rep);
  void recover_replica(uint32_t rep);
  /// The step that was in flight when `rep` failed has reached its end: nothing comes of it.
  void end_stale_step(uint32_t rep);
  /// With every replica down: the request waits at the router, or fails (on_failure: fail);
  /// true then. False when a replica is routable (or without failures).
  [[nodiscard]] bool hold_at_router(const RequestSpec& spec);
  /// Routes and admits a retried or waiting request (or holds it at the router).
  void place(const RequestSpec& spec);
  /// A bounded run stopped: the requests waiting at the router are recorded as unfinished.
  void record_waiting_unfinished();
  void finish_failure_stats();
  // Admission and abandonment (sim/admission_engine.cpp).
  /// Why the admission section refuses the request in `slot` of `rep`, empty when it may
  /// queue; sets its end_cause (Shed) and draws its cancel point.
  [[nodiscard]] std::string admission_refuses(uint32_t rep, uint32_t slot);
  /// The request in `slot` of `rep` joined the queue: its timeout is watched.
  void watch_timeout(uint32_t rep, uint32_t slot);
  /// Timeouts due now: requests without a first token leave, now or at their step's end.
  void expire_timeouts();
  /// At a step's end on `rep`, before its tokens count: the timeouts that waited for it.
  void timeouts_at_step_end(uint32_t rep);
  /// At a step's end on `rep`: the requests that reached their cancel point leave.
  void cancel_requests(uint32_t rep);
  /// Hands a departed request to the recorders and frees its slot.
  void depart(uint32_t rep, uint32_t slot);
  /// A bounded run stopped: every request still held is recorded as unfinished.
  void record_unfinished();
  /// The reason to stop before the event at `t`, or nullptr to go on.
  [[nodiscard]] const char* stop_reason(Time t, uint64_t events);
  /// KV use within capacity and equal to what the running requests hold; queued requests hold
  /// nothing; each request in at most one of queue and batch, in a state that matches; no
  /// request has produced more tokens than it asked for.
  void check_invariants(uint32_t rep, const char* when);
  /// With `check`: the scheduler's DecodeRun matches the plan it describes.
  void check_decode_run(uint32_t rep, const DecodeRun& run) const;

  Components m_c;
  std::vector<Replica> m_reps;
  RunStats m_stats;
  EventQueue m_events;
  Time m_now;
  RequestSpec m_next;          // the arrival already posted
  bool m_next_posted = false;  // m_next holds a posted arrival
  // Reactive sources: requests made ready by departures, a min-heap by (arrival, id), each
  // with its arrival posted; m_newly_ready is on_depart's scratch list.
  std::vector<RequestSpec> m_ready;
  RequestSpec m_arriving;  // a ready request being admitted (on_arrival), off the heap
  std::vector<RequestSpec> m_newly_ready;
  bool m_reactive = false;
  bool m_stopping = false;  // a bounded run is recording what is left
  // Requests on their way to the router (router delay), in arrival order.
  std::deque<RequestSpec> m_routing;
  std::vector<ReplicaLoad> m_loads;          // what the router sees
  std::vector<ReplicaLoad> m_pick_loads;     // m_loads of a router's members (scratch)
  Time m_loads_at = Time::max();             // when m_loads was taken (stale signals)
  std::vector<uint8_t> m_routable;           // per replica; empty: every replica is routable
  std::vector<uint32_t> m_routable_members;  // pick's members less the unroutable (scratch)
  std::optional<KvTransfers> m_transfers;    // with prefill and decode pools
  bool m_check = false;
  RunLimits m_limits;
  std::chrono::steady_clock::time_point m_wall_start;
  std::vector<uint8_t> m_seen;  // check mode: where each request was found
  std::vector<RequestRecorder*> m_recorders;
  std::vector<StepObserver*> m_step_observers;
  // m_step_observers split: those that read the whole StepRecord, those that read only its end.
  std::vector<StepObserver*> m_record_observers, m_end_observers;
  StepRecord m_step_record;                                  // reused for every step
  std::optional<Speculator> m_spec;                          // with a `speculative` section
  std::optional<AdmissionControl> m_admission;               // with `admission` or `abandonment`
  std::vector<AdmissionControl::Watch> m_step_end_timeouts;  // due inside a step in flight
  std::vector<uint32_t> m_cancelled;      // slots reaching their cancel point this step (scratch)
  std::optional<LoraEngine> m_lora;       // with a `lora` section
  std::optional<Autoscaler> m_autoscale;  // with cluster.autoscale
  std::vector<int64_t> m_autoscale_busy_ns;  // each replica's busy_ns at the last decision
  std::optional<FailureClock> m_failures;    // with cluster.failures
  std::vector<uint32_t> m_failed_slots;      // fail_replica's scratch
  std::vector<RequestSpec> m_retried;        // fail_replica's scratch
  std::vector<ReplicaPipeline> m_pipes;      // per replica with pipeline_schedule: micro_batches
  std::vector<double> m_stage_ms;            // scratch: a step's per-stage times
  int32_t m_active_streaks = 0;              // replicas whose decode streak is captured
  // A decode streak's steps in which requests leave or are admitted may end in its loop, not
  // by their event: not in the parallel engine's shards, which key what is recorded (a
  // departure) by the event running.
  bool m_streak_changes_inline = true;
};

}  // namespace servesim
