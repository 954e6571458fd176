// The parallel engine over MPI ranks (sim/parallel_engine.h): what the ranks swap at each
// window's start and what they send rank 0 after the run. The bytes travel through MpiWorld
// (sim/parallel_mpi.h), which is one process alone when MPI is not compiled in.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/byte_io.h"
#include "core/errors.h"
#include "sim/parallel_engine_detail.h"
#include "sim/parallel_mpi.h"

namespace servesim {
namespace {

/// Calls `f` on every field of a ReplicaStats but the stage vector, in one fixed order, so that
/// saving and loading cannot disagree. A field added to ReplicaStats is added here.
template <class R, class F>
void each_scalar(R& r, F&& f) {
  f(r.routed), f(r.steps), f(r.busy_ns), f(r.seat_steps), f(r.peak_kv_used_tokens);
  f(r.kv_capacity_tokens), f(r.pool), f(r.handed_off), f(r.received), f(r.active_s);
  f(r.costed_steps), f(r.bandwidth_bound_steps), f(r.bytes_moved), f(r.flops), f(r.down_s);
  f(r.pipeline_stages), f(r.micro_batches), f(r.micro_batch_ns);
}

void save_replicas(std::string& out, const std::vector<ReplicaStats>& rs) {
  put_bytes(out, static_cast<uint64_t>(rs.size()));
  for (const ReplicaStats& r : rs) {
    each_scalar(r, [&](const auto& v) { put_bytes(out, v); });
    put_vector(out, r.stage_busy_ns);
  }
}

std::vector<ReplicaStats> load_replicas(ByteReader& in) {
  std::vector<ReplicaStats> rs(in.get<uint64_t>());
  for (ReplicaStats& r : rs) {
    each_scalar(r, [&](auto& v) { v = in.get<std::remove_reference_t<decltype(v)>>(); });
    r.stage_busy_ns = in.get_vector<int64_t>();
  }
  return rs;
}

/// What ParallelSimulation::finish sums of a shard's stats, as bytes.
void save_stats(std::string& out, const RunStats& s) {
  save_replicas(out, s.replicas);
  for (const int64_t v : {s.steps, s.busy_ns, s.seat_steps, s.prefill_tokens, s.peak_kv_used_tokens,
                          s.kv_capacity_tokens, s.costed_steps})
    put_bytes(out, v);
  put_bytes(out, s.end);
  put_bytes(out, s.peak_bytes_per_s);
  put_bytes(out, s.peak_flops_per_s);
  put_bytes(out, s.prefix.has_value());
  if (s.prefix) put_bytes(out, *s.prefix);
}

RunStats load_stats(ByteReader& in) {
  RunStats s;
  s.replicas = load_replicas(in);
  for (int64_t* v : {&s.steps, &s.busy_ns, &s.seat_steps, &s.prefill_tokens, &s.peak_kv_used_tokens,
                     &s.kv_capacity_tokens, &s.costed_steps})
    *v = in.get<int64_t>();
  s.end = in.get<Time>();
  s.peak_bytes_per_s = in.get<double>();
  s.peak_flops_per_s = in.get<double>();
  if (in.get<bool>()) s.prefix = in.get<KvManager::PrefixStats>();
  return s;
}

}  // namespace

void ParallelSimulation::exchange(int which) {
  // This rank's part: whether it was interrupted, its busiest thread's CPU seconds in the
  // window, its replicas' loads, then the requests its shards took in and let go in the window
  // (in buffer `which`).
  std::string mine;
  put_bytes(mine, static_cast<bool>(m_limits.interrupt && *m_limits.interrupt));
  put_bytes(mine, m_window_cpu_s);
  const auto me = static_cast<size_t>(m_rank);
  for (uint32_t i = m_rank_first[me]; i < m_rank_first[me + 1]; ++i) put_bytes(mine, m_loads[i]);
  if (which >= 0)
    for (auto& sh : m_shards) {
      for (const Item& it : sh->buffers[which].items) {
        if (it.kind != ItemKind::Admit && it.kind != ItemKind::Leave)
          throw std::logic_error("a recorded request in a run over MPI ranks");
        put_bytes(mine, Change{it.key, static_cast<int8_t>(it.kind == ItemKind::Admit ? 1 : -1)});
      }
      sh->buffers[which].clear();
    }
  const std::vector<std::string> all = m_mpi->allgather(mine);
  bool interrupted = false;
  double busiest = 0;  // the last window's busiest thread, over all ranks
  m_changes.clear();
  for (size_t r = 0; r < all.size(); ++r) {
    ByteReader in(all[r]);
    interrupted |= in.get<bool>();
    busiest = std::max(busiest, in.get<double>());
    for (uint32_t i = m_rank_first[r]; i < m_rank_first[r + 1]; ++i)
      m_loads[i] = in.get<ReplicaLoad>();
    while (!in.done()) m_changes.push_back(in.get<Change>());
  }
  m_timing.critical_cpu_s += busiest;
  m_window_cpu_s = 0;
  // As merge_window counts them: every rank counts the same changes in the same order.
  std::sort(m_changes.begin(), m_changes.end(),
            [](const Change& a, const Change& b) { return a.key < b.key; });
  for (const Change& c : m_changes) {
    m_live += c.delta;
    m_stats.peak_in_flight = std::max(m_stats.peak_in_flight, m_live);
  }
  if (m_stats.peak_in_flight > m_limits.max_queued)
    throw InputError(fmt::format(
        "more than {} requests held at once (--max-queued): the parallel engine does not stop "
        "early with partial results; run one process without --threads for that",
        m_limits.max_queued));
  if (interrupted) throw InputError("interrupted");
}

void ParallelSimulation::gather_ranks(std::vector<const RunStats*>& parts) {
  // Each of this rank's shards: its first replica, its stats and its recorder part.
  std::string mine;
  if (m_rank != 0)
    for (auto& sh : m_shards) {
      put_bytes(mine, sh->base);
      save_stats(mine, sh->sim->m_stats);
      std::string part;
      if (sh->part) sh->part->save_part(part);
      put_string(mine, part);
    }
  const std::vector<std::string> all = m_mpi->gather(mine);
  if (m_rank != 0) return;
  for (size_t r = 1; r < all.size(); ++r) {
    ByteReader in(all[r]);
    while (!in.done()) {
      const auto base = in.get<uint32_t>();
      m_remote_stats.push_back(load_stats(in));
      const std::string part = in.get_string();
      if (m_sharded) {
        const std::unique_ptr<ShardedRecorder> p = m_sharded->make_part(base);
        p->load_part(part);
        m_sharded->merge_part(*p);
      }
    }
  }
  for (const RunStats& s : m_remote_stats) parts.push_back(&s);
}

}  // namespace servesim
