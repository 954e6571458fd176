#pragma once
// The parallel engine: one cluster's replicas run on several threads, with results byte for
// byte those of the sequential engine (Simulation) on the same config (docs/cluster.md#parallel).
//
// With a stale-load router (cluster.router.load_refresh_ms > 0) a routing decision depends only
// on the replicas' loads read at the last refresh and on the router's own decisions since. The
// refreshes happen at the first routing at least load_refresh_ms after the previous one, so the
// arrivals alone fix when they happen. A window runs from one refresh to the next: every
// replica is advanced to the window's first routing instant (its step ends there included, the
// rest of that instant not), the loads are read, every arrival of the window is routed at once,
// and each shard (a contiguous block of replicas, with its own event queue) then runs alone to
// the next window's first instant, on whichever thread takes it first (the threads take the
// shards in turn; sim/parallel_engine_barrier.h starts and ends the window).
//
// The sequential engine orders the events of one instant by phase, then replica, then posting
// order (sim/event_queue.h); each shard's queue keeps the same order among its replicas, and
// what the shards record (requests leaving, steps planned) is merged at every window's end by
// (time, phase, replica or arrival, order within the shard): the order the sequential engine
// hands them out. Recorders and step observers see that merged stream on the calling thread.
// A ShardedRecorder (sim/sharded_recorder.h: the summary's MetricsRecorder) is split instead:
// each shard records into a part of it on its own thread, folded back after the run; with no
// other recorder or observer, the merge then only counts the requests held at once.
//
// Over MPI ranks (sim/parallel_mpi.h; sim/parallel_ranks.cpp) the shards are those of
// ranks x threads threads, each rank running its own contiguous run of them on its threads.
// Every rank reads the same workload and routes every arrival with the same router from the
// same loads, so all make the same decisions; each keeps the arrivals of its own replicas. At
// each window's start the ranks swap their replicas' loads and the requests their shards took
// in and let go in the last window (keys only: every rank then counts the requests held at
// once in the sequential order); after the run, each rank sends rank 0 its shards' counters and
// recorder parts (ShardedRecorder::save_part), which rank 0 folds in replica order as it folds
// its own. Only the summary's recorder is split this way: outputs written in the run's order
// (requests.csv, steps.csv) need the threads' merged stream, on one rank.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/sharded_recorder.h"
#include "sim/simulation.h"

namespace servesim {

class MpiWorld;  // sim/parallel_mpi.h

/// Why a run of `c` cannot be split over threads, as a clause ("the router reads live loads
/// (cluster.router.load_refresh_ms: 0)"); empty when it can. Such a run goes to the sequential
/// engine: the parallel one would not give the same result.
[[nodiscard]] std::string parallel_unsupported(const Components& c, const RunLimits& limits);

class ParallelSimulation {
 public:
  /// `threads` threads in all, k_shards_per_thread shards each (at most one per replica): 1
  /// runs one shard on the calling thread (the baseline of parallel efficiency); with N >= 2
  /// the calling thread routes, merges the previous window's outputs and then takes shards in
  /// turn with N - 1 other threads.
  /// With `ranks` of size R > 1 (an MPI launch), the shards are those of R x `threads`
  /// threads and this process runs its rank's share of them on `threads` threads; every rank
  /// constructs and runs it (its calls are collective), and only rank 0's stats() and sharded
  /// recorder hold the whole run's results.
  /// REQUIRES: parallel_unsupported(c, limits) is empty, threads >= 1; with ranks: at least R
  /// replicas, no recorder or observer but the sharded one.
  ParallelSimulation(Components c, int threads, bool check = false, RunLimits limits = {},
                     const MpiWorld* ranks = nullptr);
  ~ParallelSimulation();
  ParallelSimulation(const ParallelSimulation&) = delete;
  ParallelSimulation& operator=(const ParallelSimulation&) = delete;

  /// As Simulation's: each sees the requests and steps in the sequential engine's order.
  /// REQUIRES: `r` outlives run().
  void add_recorder(RequestRecorder& r) { m_recorders.push_back(&r); }
  void add_step_observer(StepObserver& o) { m_observers.push_back(&o); }
  /// Records into `r` split by shard (ShardedRecorder), not through the merged stream. At
  /// most one. REQUIRES: `r` outlives run().
  void add_sharded_recorder(ShardedRecorder& r) { m_sharded = &r; }
  /// Runs to completion. Throws InputError when more requests are held at once than
  /// RunLimits::max_queued (the sequential engine stops there with partial results instead).
  void run();

  [[nodiscard]] const RunStats& stats() const { return m_stats; }
  [[nodiscard]] const std::vector<std::string>& class_names() const {
    return m_source->class_names();
  }
  [[nodiscard]] const std::vector<std::string>& tenant_names() const {
    return m_source->tenant_names();
  }
  /// This process's rank (0 without MPI ranks): only rank 0 has the run's results.
  [[nodiscard]] int rank() const { return m_rank; }
  /// Windows run (routing snapshots taken), for the benchmarks' sync cost.
  [[nodiscard]] int64_t windows() const { return m_windows; }
  /// Wall seconds spent routing (serial), running the shards' windows (parallel; with worker
  /// threads, the merging of the previous window overlaps it) and merging their outputs into
  /// the recorders (serial), and the process's CPU seconds over the same spans.
  struct Timing {
    double routing_s = 0, shards_s = 0, merging_s = 0;
    double routing_cpu_s = 0, shards_cpu_s = 0, merging_cpu_s = 0;
    /// With worker threads or MPI ranks: the windows' critical path in thread CPU seconds, the
    /// sum over windows of the busiest thread's (the calling thread's shard and merge, or a
    /// worker's shard; over ranks, the busiest of all ranks' threads): the windows' wall time
    /// on idle cores, whatever else the machine runs. Over ranks, routing includes the
    /// exchange with the other ranks (waiting for the slowest).
    double critical_cpu_s = 0;
  };
  [[nodiscard]] const Timing& timing() const { return m_timing; }

 private:
  struct Shard;
  struct Where {
    uint32_t shard, local;
  };
  void route_window(RequestSpec& spec, bool& have);
  void take_snapshot();
  void start_workers();
  /// Runs a window on every shard; with worker threads, merges buffer `merge_buffer` (>= 0)
  /// meanwhile.
  void run_window(int merge_buffer);
  void run_shard(Shard& sh);
  /// The shards not taken yet this round, one at a time, on any thread.
  void take_shards();
  /// One round on every thread: this one merges buffer `merge_buffer` (>= 0) first, then all
  /// take shards. Returns the busiest thread's CPU seconds (0 when not timed).
  double run_round(int merge_buffer);
  void merge_window(int which);
  /// Splits m_sharded into one part per shard, and tells the shards what to keep.
  void start_recording();
  /// Finishes the parts on the shards' threads and folds them into m_sharded.
  void finish_recording();
  void finish();
  /// MPI ranks (sim/parallel_ranks.cpp): swaps the loads and the last window's held-request
  /// changes (buffer `which`, none if < 0) with the other ranks and counts them in order.
  void exchange(int which);
  /// After the run: the other ranks' shards' counters and recorder parts, to rank 0, which
  /// appends their stats to `parts` and folds the recorder parts.
  void gather_ranks(std::vector<const RunStats*>& parts);
  [[nodiscard]] bool local(uint32_t replica) const { return m_where[replica].shard != k_remote; }

  std::unique_ptr<WorkloadSource> m_source;
  std::unique_ptr<Router> m_router;
  Time m_router_delay, m_load_refresh;
  std::vector<PoolSpec> m_pools;
  RunLimits m_limits;
  bool m_timed;  // times its parts (Timing), at SERVESIM_LOG=info or finer
  uint32_t m_threads = 1;
  /// Shards a thread when there are several. More would let a thread whose shards ran short in
  /// a window take another's, but each shard costs its own event queue, markers and recorder
  /// part: on 64 replicas, 2 and 4 a thread ran 5 and 10% slower than 1
  /// (docs/performance.md#parallel-engine).
  static constexpr uint32_t k_shards_per_thread = 1;
  std::vector<std::unique_ptr<Shard>> m_shards;
  std::vector<Where> m_where;  // by replica
  std::vector<ReplicaLoad> m_loads;
  RunStats m_stats;
  std::vector<RequestRecorder*> m_recorders;
  std::vector<StepObserver*> m_observers;
  ShardedRecorder* m_sharded = nullptr;
  bool m_finishing = false;  // the workers' next round finishes the parts
  uint64_t m_arrivals = 0;   // arrivals routed so far (their order, for the merge)
  Time m_last_arrival;
  int64_t m_live = 0;  // requests held, all replicas together, as the merge replays them
  int64_t m_windows = 0;
  Timing m_timing;
  struct Workers;
  std::unique_ptr<Workers> m_workers;
  // MPI ranks: this process's rank of m_ranks, each rank's first replica (and the count last),
  // the buffer whose held-request changes the next exchange sends, the other ranks' shards'
  // stats (rank 0) and a reused buffer of those changes.
  static constexpr uint32_t k_remote = UINT32_MAX;  // Where::shard of another rank's replica
  const MpiWorld* m_mpi = nullptr;
  int m_rank = 0, m_ranks = 1;
  std::vector<uint32_t> m_rank_first;
  int m_unsent = -1;
  double m_window_cpu_s = 0;  // the last window's busiest thread here, for the exchange
  std::vector<RunStats> m_remote_stats;
  struct Change;  // sim/parallel_engine_detail.h
  std::vector<Change> m_changes;
  struct Ref;                // sim/parallel_engine_detail.h
  std::vector<Ref> m_order;  // merge_window's, reused from window to window
};

}  // namespace servesim
