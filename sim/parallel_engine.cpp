#include "sim/parallel_engine.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <deque>
#include <exception>
#include <stdexcept>
#include <thread>

#include "core/errors.h"
#include "sim/parallel_engine_barrier.h"
#include "sim/parallel_engine_detail.h"
#include "sim/parallel_mpi.h"

namespace servesim {
namespace {

/// A shard's workload: nothing; the parallel engine posts its arrivals itself.
class NoSource final : public WorkloadSource {
 public:
  bool next(RequestSpec& /*out*/) override { return false; }
  [[nodiscard]] size_t size_hint() const override { return 0; }
};

/// A shard's router: never asked; the parallel engine routes with the cluster's router.
class NoRouter final : public Router {
 public:
  uint32_t route(const RequestSpec& /*r*/, std::span<const ReplicaLoad> /*loads*/) override {
    throw std::logic_error("a parallel engine's shard routed a request itself");
  }
};

}  // namespace

std::string parallel_unsupported(const Components& c, const RunLimits& limits) {
  if (c.replicas.size() < 2) return "a single replica has nothing to share out";
  if (c.load_refresh == Time::ns(0))
    return "the router reads live loads (cluster.router.load_refresh_ms: 0), so every "
           "routing decision needs every replica's state at that instant";
  if (c.decode_router || std::any_of(c.pools.begin(), c.pools.end(),
                                     [](const PoolSpec& p) { return p.role != PoolRole::Mixed; }))
    return "prefill/decode pools hand KV between replicas (not parallel yet)";
  if (c.speculative) return "speculative decoding draws from one random stream for all replicas";
  if (c.lora) return "multi-LoRA adapter caches and the lora_affinity router (not parallel yet)";
  if (std::any_of(c.replicas.begin(), c.replicas.end(),
                  [](const auto& r) { return r.kv && r.kv->offload() != nullptr; }))
    return "kv.offload tiers, which a pool's replicas may share (not parallel yet)";
  if (c.admission)
    return "admission and abandonment decide at the replica's state at each arrival (not parallel "
           "yet)";
  if (c.autoscale)
    return "cluster.autoscale changes the routable replicas at its decisions (not parallel yet)";
  if (c.failures)
    return "replica failures send a failed replica's requests across the cluster (not parallel "
           "yet)";
  if (std::any_of(c.replicas.begin(), c.replicas.end(), [](const auto& r) {
        return r.step_time && r.step_time->pipeline().micro_batches;
      }))
    return "step_time.pipeline_schedule: micro_batches keeps several batches in flight per replica "
           "(not parallel yet)";
  if (c.source->reactive()) return "a closed-loop workload makes requests ready as others leave";
  if (limits.max_sim_time != Time::max() || limits.max_wall_s > 0)
    return "a bounded run (--max-sim-time, --max-wall-time) stops at one event of the whole run";
  return {};
}

namespace {

/// The calling thread's CPU seconds so far.
double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// Wall and process CPU time since the last mark; nothing when not `on` (a CPU clock is a
/// system call of some microseconds on a virtual machine, and a window may be a few hundred).
class Stopwatch {
 public:
  explicit Stopwatch(bool on) : m_on(on) { start(); }
  void start() {
    if (!m_on) return;
    m_wall = std::chrono::steady_clock::now();
    m_cpu = std::clock();
  }
  /// Adds the time since the last mark to `wall_s` and `cpu_s`, and marks now.
  void add_to(double& wall_s, double& cpu_s) {
    if (!m_on) return;
    const auto wall = std::chrono::steady_clock::now();
    const std::clock_t cpu = std::clock();
    wall_s += std::chrono::duration<double>(wall - m_wall).count();
    cpu_s += static_cast<double>(cpu - m_cpu) / CLOCKS_PER_SEC;
    m_wall = wall;
    m_cpu = cpu;
  }

 private:
  std::chrono::steady_clock::time_point m_wall;
  std::clock_t m_cpu = 0;
  bool m_on;
};

}  // namespace

struct ParallelSimulation::Workers {
  explicit Workers(uint32_t n) : sync(n - 1), cpu_s(n) {}
  parallel_detail::WindowBarrier sync;
  alignas(64) std::atomic<uint32_t> next{0};  // the next shard to take this round
  std::atomic<bool> quit{false};
  struct alignas(64) Cpu {
    double s = 0;  // a thread's CPU seconds in the last round (its line alone)
  };
  std::vector<Cpu> cpu_s;  // by thread, the calling thread first
  std::vector<std::thread> threads;
};

ParallelSimulation::ParallelSimulation(Components c, int threads, bool check, RunLimits limits,
                                       const MpiWorld* ranks)
    : m_source(std::move(c.source)),
      m_router(std::move(c.router)),
      m_router_delay(c.router_delay),
      m_load_refresh(c.load_refresh),
      m_pools(c.pools),
      m_limits(limits),
      m_timed(spdlog::should_log(spdlog::level::info)),
      m_mpi(ranks) {
  if (m_mpi) {
    m_rank = m_mpi->rank();
    m_ranks = m_mpi->size();
  }
  m_stats.pools = m_pools;  // the metrics read them before the run
  const auto replicas = static_cast<uint32_t>(c.replicas.size());
  if (replicas < static_cast<uint32_t>(m_ranks))
    throw std::logic_error("a parallel run over more ranks than replicas");
  // With worker threads, k_shards_per_thread shards a thread, which the threads take in turn
  // each window (the calling thread routes, merges the last window and then takes its turns),
  // so that a thread whose shards ran short in a window takes more; one thread runs one shard.
  // Over ranks, rank r runs the r-th share of the shards of ranks x threads threads.
  const auto ranks_n = static_cast<uint32_t>(m_ranks);
  const uint32_t per_thread = threads > 1 ? k_shards_per_thread : 1;
  const uint32_t shards = std::clamp<uint32_t>(
      static_cast<uint32_t>(std::max(1, threads)) * ranks_n * per_thread, 1, replicas);
  m_where.resize(replicas);
  m_loads.resize(replicas);
  m_rank_first.assign(ranks_n + 1, replicas);
  uint32_t next = 0;
  for (uint32_t s = 0; s < shards; ++s) {
    const uint32_t count = replicas / shards + (s < replicas % shards ? 1 : 0);
    const uint32_t rank = static_cast<uint32_t>(uint64_t{s} * ranks_n / shards);
    m_rank_first[rank] = std::min(m_rank_first[rank], next);
    if (rank != static_cast<uint32_t>(m_rank)) {  // another rank's: its replicas are dropped
      for (uint32_t i = 0; i < count; ++i) m_where[next + i] = {k_remote, i};
      next += count;
      continue;
    }
    Components part;
    part.source = std::make_unique<NoSource>();
    for (uint32_t i = 0; i < count; ++i) {
      m_where[next + i] = {static_cast<uint32_t>(m_shards.size()), i};
      part.replicas.push_back(std::move(c.replicas[next + i]));
    }
    if (count > 1) part.router = std::make_unique<NoRouter>();
    part.seed = c.seed;
    auto sim = std::make_unique<Simulation>(std::move(part), check);
    sim->m_streak_changes_inline = false;  // a shard's records are keyed by the event running
    m_shards.push_back(std::make_unique<Shard>(std::move(sim), next));
    next += count;
  }
  m_threads = std::clamp<uint32_t>(static_cast<uint32_t>(std::max(1, threads)), 1,
                                   static_cast<uint32_t>(m_shards.size()));
  if (m_threads > 1) start_workers();
}

ParallelSimulation::~ParallelSimulation() {
  if (!m_workers) return;
  m_workers->quit = true;
  m_workers->sync.start_round();
  for (std::thread& t : m_workers->threads) t.join();
}

void ParallelSimulation::take_snapshot() {
  // What Simulation::refresh_loads reads, shard by shard; the other ranks' replicas' loads come
  // from them.
  for (uint32_t i = 0; i < m_loads.size(); ++i) {
    if (!local(i)) continue;
    const BatchState& st = m_shards[m_where[i].shard]->sim->m_reps[m_where[i].local].state;
    m_loads[i] = {static_cast<int64_t>(st.waiting().size() + st.running().size()),
                  st.kv().used_tokens(), st.kv().capacity_tokens()};
  }
  if (m_ranks > 1) {
    exchange(m_unsent);
    m_unsent = -1;
  }
}

void ParallelSimulation::route_window(RequestSpec& spec, bool& have) {
  const Time start = spec.arrival + m_router_delay;
  take_snapshot();
  Time last = start;
  do {
    const Time at = spec.arrival + m_router_delay;
    const uint32_t k = m_router->route(spec, m_loads);
    if (k >= m_loads.size()) throw std::logic_error("router picked a replica that does not exist");
    ++m_loads[k].outstanding;  // as Simulation::pick counts its own decisions
    m_last_arrival = spec.arrival;
    if (local(k)) {
      Shard& sh = *m_shards[m_where[k].shard];
      sh.arrivals.push_back({std::move(spec), m_where[k].local, m_arrivals});
      sh.sim->post(Event::arrival(at));
    } else {  // another rank's: moved from all the same, so that every rank reads on alike
      const RequestSpec gone = std::move(spec);
    }
    ++m_arrivals;
    last = at;
    have = m_source->next(spec);
    if (have && spec.arrival < m_last_arrival)
      throw std::logic_error("workload source yielded arrivals out of order");
  } while (have && spec.arrival + m_router_delay - start < m_load_refresh);
  // The next window's first routing ends this one; after the last arrival, every replica
  // learns that none is to come (the sequential engine's arrivals_done) at that instant.
  for (auto& sh : m_shards) {
    sh->sim->post(Event::routed(have ? spec.arrival + m_router_delay : last));
    sh->markers.push_back(have);
  }
}

void ParallelSimulation::run_shard(Shard& sh) {
  Simulation& sim = *sh.sim;
  while (!sim.m_events.empty()) {
    const Event e = sim.m_events.top();
    sim.m_events.pop();
    if (e.kind() == EventKind::Routed) {  // a marker
      sim.m_now = e.time();
      sim.m_stats.end = e.time();
      const bool window_end = sh.markers.front();
      sh.markers.pop_front();
      if (window_end) return;
      for (uint32_t i = 0; i < sim.m_reps.size(); ++i) {
        Simulation::Replica& r = sim.m_reps[i];
        // As Simulation::update_arrivals_done: an idle replica with requests waiting is told.
        if (!r.state.arrivals_done() && !r.busy && !r.state.waiting().empty()) {
          sim.post_schedule(i);
        }
        r.state.set_arrivals_done(true);
      }
      continue;
    }
    if (e.kind() != EventKind::Arrival) {
      sh.key = {e.time(), phase_of(e.kind()), sh.base + e.order_replica(), 0};
      sim.dispatch(e);
      continue;
    }
    // A request this shard's replica was routed: Simulation::on_arrival (or on_routed) after
    // its routing.
    sim.m_now = e.time();
    sim.m_stats.end = e.time();
    Shard::Pending& p = sh.arrivals.front();
    sh.key = {e.time(), phase_of(EventKind::Arrival), p.order, 0};
    const size_t live = sim.m_reps[p.rep].state.live();
    sim.admit(p.rep, p.spec);
    if (sim.m_reps[p.rep].state.live() > live) sh.push(sh.key, ItemKind::Admit, 0);
    const uint32_t rep = p.rep;
    sh.arrivals.pop_front();
    if (!sim.m_reps[rep].busy) sim.schedule(rep);
  }
}

void ParallelSimulation::start_workers() {
  m_workers = std::make_unique<Workers>(m_threads);
  for (uint32_t t = 1; t < m_threads; ++t)
    m_workers->threads.emplace_back([this, t] {
      for (uint32_t round = 0;;) {
        round = m_workers->sync.wait_round(round);  // a window starts
        if (m_workers->quit.load(std::memory_order_acquire)) return;
        const double cpu = m_timed ? thread_cpu_s() : 0;
        take_shards();
        if (m_timed) m_workers->cpu_s[t].s = thread_cpu_s() - cpu;
        m_workers->sync.arrive();  // it ends
      }
    });
}

void ParallelSimulation::take_shards() {
  const auto n = static_cast<uint32_t>(m_shards.size());
  for (;;) {
    // Relaxed: the round's start published the shards, its end publishes what they did.
    const uint32_t s = m_workers->next.fetch_add(1, std::memory_order_relaxed);
    if (s >= n) return;
    Shard& sh = *m_shards[s];
    try {
      if (!m_finishing) {
        run_shard(sh);
      } else if (sh.part) {
        sh.part->finish_part();
      }
    } catch (...) {
      sh.error = std::current_exception();
    }
  }
}

double ParallelSimulation::run_round(int merge_buffer) {
  m_workers->next.store(0, std::memory_order_relaxed);
  m_workers->sync.start_round();
  std::exception_ptr merge_error;
  const double cpu = m_timed ? thread_cpu_s() : 0;
  try {
    if (merge_buffer >= 0) merge_window(merge_buffer);
  } catch (...) {
    merge_error = std::current_exception();
  }
  take_shards();
  if (m_timed) m_workers->cpu_s[0].s = thread_cpu_s() - cpu;
  m_workers->sync.wait_done();
  if (merge_error) std::rethrow_exception(merge_error);
  for (auto& sh : m_shards)
    if (sh->error) std::rethrow_exception(sh->error);
  double busiest = 0;
  for (const Workers::Cpu& c : m_workers->cpu_s) busiest = std::max(busiest, c.s);
  return busiest;
}

void ParallelSimulation::run_window(int merge_buffer) {
  ++m_windows;
  for (auto& sh : m_shards) sh->current ^= 1;  // the window writes the other buffer
  const bool timed = m_timed;
  if (!m_workers) {  // one thread: run() merges after each window
    const double cpu = m_ranks > 1 && timed ? thread_cpu_s() : 0;
    for (auto& sh : m_shards) run_shard(*sh);
    if (m_ranks > 1 && timed) m_window_cpu_s = thread_cpu_s() - cpu;  // the ranks' critical path
    return;
  }
  // The threads take the shards in turn while this one merges the previous window first.
  const double busiest = run_round(merge_buffer);
  if (m_ranks > 1) {
    m_window_cpu_s = busiest;  // the busiest rank's, at the next exchange
  } else {
    m_timing.critical_cpu_s += busiest;
  }
}

void ParallelSimulation::merge_window(int which) {
  // Each shard's items come in key order when they are only requests taken in and let go (the
  // keys of its events, which run in order); then the shards' runs are merged, in linear time,
  // else sorted (a step planned at once takes its Schedule event's key, ahead of its turn).
  std::vector<Ref>& order = m_order;
  order.clear();
  std::vector<size_t> runs{0};
  bool sorted = true;
  for (uint32_t s = 0; s < m_shards.size(); ++s) {
    const std::vector<Item>& items = m_shards[s]->buffers[which].items;
    for (const Item& it : items) order.push_back({&it, s});
    sorted = sorted && std::is_sorted(items.begin(), items.end(),
                                      [](const Item& a, const Item& b) { return a.key < b.key; });
    runs.push_back(order.size());
  }
  const auto by_key = [](const Ref& a, const Ref& b) { return a.item->key < b.item->key; };
  if (!sorted) {
    std::sort(order.begin(), order.end(), by_key);
  } else {
    for (size_t r = 2; r < runs.size(); ++r)
      std::inplace_merge(order.begin(), order.begin() + static_cast<ptrdiff_t>(runs[r - 1]),
                         order.begin() + static_cast<ptrdiff_t>(runs[r]), by_key);
  }
  for (const Ref& ref : order) {
    Shard::Buffer& sh = m_shards[ref.shard]->buffers[which];
    switch (ref.item->kind) {
      case ItemKind::Admit:  // Simulation::admit's count of what is held
        m_stats.peak_in_flight = std::max(m_stats.peak_in_flight, ++m_live);
        break;
      case ItemKind::Leave:
        --m_live;
        break;
      case ItemKind::Record: {
        const Request& r = sh.requests[ref.item->index];
        if (r.state != RequestState::Rejected) --m_live;
        for (RequestRecorder* rec : m_recorders) rec->record(r);
        break;
      }
      case ItemKind::Step:
        for (StepObserver* o : m_observers) o->on_step(sh.steps[ref.item->index]);
        break;
    }
  }
  for (auto& sh : m_shards) sh->buffers[which].clear();
  if (m_stats.peak_in_flight > m_limits.max_queued)
    throw InputError(fmt::format(
        "more than {} requests held at once (--max-queued): the parallel engine does not stop "
        "early with partial results; run without --threads for that",
        m_limits.max_queued));
  if (m_limits.interrupt && *m_limits.interrupt) throw InputError("interrupted");
}

void ParallelSimulation::start_recording() {
  for (auto& sh : m_shards) {
    sh->keep_requests = !m_recorders.empty();
    sh->keep_steps = !m_observers.empty();
    if (sh->keep_steps) sh->sim->add_step_observer(sh->tap);
    if (!m_sharded) continue;
    sh->part = m_sharded->make_part(sh->base);
    sh->sim->add_recorder(*sh->part);
    sh->sim->add_step_observer(*sh->part);
  }
}

void ParallelSimulation::finish_recording() {
  if (!m_sharded) return;
  // The parts' finishing runs on the shards' threads (a parallel part of the run); folding
  // them is serial.
  Stopwatch watch(m_timed);
  if (m_workers) {  // one more round: the threads finish the shards' parts
    m_finishing = true;
    const double busiest = run_round(-1);
    m_finishing = false;
    m_timing.critical_cpu_s += busiest;
  } else {
    for (auto& sh : m_shards) sh->part->finish_part();
  }
  watch.add_to(m_timing.shards_s, m_timing.shards_cpu_s);
  // Over ranks, the other ranks' parts go to rank 0 (gather_ranks), which folds them after its
  // own: replica order.
  if (m_rank == 0)
    for (auto& sh : m_shards) m_sharded->merge_part(*sh->part);
  watch.add_to(m_timing.merging_s, m_timing.merging_cpu_s);
}

void ParallelSimulation::run() {
  if (m_ranks > 1 && (!m_recorders.empty() || !m_observers.empty()))
    throw std::logic_error("a recorder of the merged stream in a run over MPI ranks");
  for (StepObserver* o : m_observers) o->on_start(static_cast<uint32_t>(m_where.size()), m_pools);
  start_recording();
  RequestSpec spec;
  bool have = m_source->next(spec);
  if (!have)
    for (auto& sh : m_shards)
      for (Simulation::Replica& r : sh->sim->m_reps) r.state.set_arrivals_done(true);
  // Window k's outputs are merged while window k + 1 runs (with worker threads), or right
  // after it (one thread); the last window's after the loop. Over ranks, they go to the other
  // ranks at the next window's snapshot (take_snapshot), the last window's after the loop.
  int pending = -1;  // the buffer holding the window not merged yet
  Stopwatch watch(m_timed);
  for (;;) {
    const bool routed = have;
    watch.start();
    if (have) route_window(spec, have);
    watch.add_to(m_timing.routing_s, m_timing.routing_cpu_s);
    run_window(pending);
    watch.add_to(m_timing.shards_s, m_timing.shards_cpu_s);
    pending = m_shards[0]->current;
    if (m_ranks > 1) {
      m_unsent = pending;
      pending = -1;
    } else if (!m_workers) {
      merge_window(pending);
      watch.add_to(m_timing.merging_s, m_timing.merging_cpu_s);
      pending = -1;
    }
    if (!routed || !have) break;
  }
  if (pending >= 0 || m_ranks > 1) {
    watch.start();
    if (m_ranks > 1) {
      exchange(m_unsent);
      m_unsent = -1;
    } else {
      merge_window(pending);
    }
    watch.add_to(m_timing.merging_s, m_timing.merging_cpu_s);
  }
  finish_recording();
  finish();
  // The benchmarks' scaling model reads this (SERVESIM_LOG=info): the serial parts and the
  // windows' part, whose shares of the run set the speed-up. CPU seconds are the process's (all
  // threads): on one thread they split the work exactly, whatever else the machine runs.
  const Timing& t = m_timing;
  spdlog::info(
      "parallel engine: {} shards, {} windows; routing {:.3f} s, shards {:.3f} s, merging "
      "{:.3f} s; cpu: routing {:.3f} s, shards {:.3f} s, merging {:.3f} s; critical path "
      "{:.3f} s",
      m_shards.size(), m_windows, t.routing_s, t.shards_s, t.merging_s, t.routing_cpu_s,
      t.shards_cpu_s, t.merging_cpu_s, t.critical_cpu_s);
}

void ParallelSimulation::finish() {
  RunStats& st = m_stats;
  std::vector<const RunStats*> parts;  // each shard's, in replica order
  for (auto& sh : m_shards) {
    Simulation& sim = *sh->sim;
    sim.check_all_served();
    sim.finish_stats();
    parts.push_back(&sim.m_stats);
  }
  if (m_ranks > 1) {
    Stopwatch watch(m_timed);
    gather_ranks(parts);
    watch.add_to(m_timing.merging_s, m_timing.merging_cpu_s);
  }
  for (const RunStats* part : parts) {
    const RunStats& s = *part;
    st.replicas.insert(st.replicas.end(), s.replicas.begin(), s.replicas.end());
    st.steps += s.steps;
    st.busy_ns += s.busy_ns;
    st.seat_steps += s.seat_steps;
    st.prefill_tokens += s.prefill_tokens;
    st.peak_kv_used_tokens += s.peak_kv_used_tokens;
    st.kv_capacity_tokens += s.kv_capacity_tokens;
    st.end = std::max(st.end, s.end);
    if (s.costed_steps > 0) {
      st.peak_bytes_per_s = s.peak_bytes_per_s;
      st.peak_flops_per_s = s.peak_flops_per_s;
    }
    if (s.prefix) {
      if (!st.prefix) st.prefix.emplace();
      st.prefix->queried_tokens += s.prefix->queried_tokens;
      st.prefix->hit_tokens += s.prefix->hit_tokens;
      st.prefix->queried_blocks += s.prefix->queried_blocks;
      st.prefix->hit_blocks += s.prefix->hit_blocks;
      st.prefix->evicted_blocks += s.prefix->evicted_blocks;
    }
  }
  // The cost sums replica by replica, in replica order, as Simulation::finish_stats adds them.
  for (const ReplicaStats& r : st.replicas) {
    st.costed_steps += r.costed_steps;
    st.bandwidth_bound_steps += r.bandwidth_bound_steps;
    st.bytes_moved += r.bytes_moved;
    st.flops += r.flops;
  }
  for (uint32_t p = 0; p < m_pools.size() && m_rank == 0; ++p)  // other ranks: a share only
    for (uint32_t i = 0; i < m_pools[p].replicas; ++i)
      st.replicas[m_pools[p].first_replica + i].pool = p;
  if (m_source->waiting() != 0) throw std::logic_error("a closed-loop source in a parallel run");
  st.workload_counters = m_source->counters();
  st.class_names = m_source->class_names();
  st.tenant_names = m_source->tenant_names();
}

}  // namespace servesim
