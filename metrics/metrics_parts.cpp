// MetricsRecorder as a ShardedRecorder (sim/sharded_recorder.h): the parts the parallel engine
// records its shards into, folded back after the run, and the replica-order sums that make the
// result the sequential engine's whatever the shards.
#include <algorithm>
#include <stdexcept>

#include "core/byte_io.h"
#include "metrics/metrics.h"

namespace servesim {

bool MetricsRecorder::shardable() const {
  return !m_replicas.empty() && m_pools.empty() &&
         (m_class_names == nullptr || m_class_names->empty()) &&
         (m_tenant_names == nullptr || m_tenant_names->empty());
}

std::unique_ptr<ShardedRecorder> MetricsRecorder::make_part(uint32_t first_replica) {
  if (!shardable()) throw std::logic_error("a metrics recorder split that cannot be");
  auto p = std::make_unique<MetricsRecorder>(m_slo, m_exact_limit);
  p->m_replica_base = first_replica;
  p->m_replica_limit = m_replica_limit;
  p->m_accelerators = m_accelerators;
  p->m_replicas.assign(m_replicas.size(), RequestTally(m_replica_limit));
  p->m_pool_of = m_pool_of;
  return p;
}

void MetricsRecorder::finish_part() {
  flush_all_gap_counts();
  // Each replica's percentiles sort its kept values: here, on the shard's thread.
  for (RequestTally& t : m_replicas) {
    if (t.entered == 0 && t.left == 0) continue;
    t.ttft.prepare();
    t.tpot.prepare();
    t.e2e.prepare();
    t.itl.q.prepare();
  }
}

void MetricsRecorder::merge_part(ShardedRecorder& part) {
  auto& p = dynamic_cast<MetricsRecorder&>(part);
  Summary& s = m_s;
  s.requests += p.m_s.requests;
  s.finished += p.m_s.finished;
  s.rejected += p.m_s.rejected;
  s.unfinished += p.m_s.unfinished;
  s.prompt_tokens += p.m_s.prompt_tokens;
  s.output_tokens += p.m_s.output_tokens;
  s.preemptions += p.m_s.preemptions;
  s.swap_preemptions += p.m_s.swap_preemptions;
  s.preempted_requests += p.m_s.preempted_requests;
  m_first_arrival = std::min(m_first_arrival, p.m_first_arrival);
  m_last_release = std::max(m_last_release, p.m_last_release);
  m_status.finished += p.m_status.finished;
  m_status.rejected += p.m_status.rejected;
  m_status.shed += p.m_status.shed;
  m_status.timed_out += p.m_status.timed_out;
  m_status.cancelled += p.m_status.cancelled;
  m_status.failed += p.m_status.failed;
  m_status.unfinished += p.m_status.unfinished;
  if (p.m_first_rejected_id < m_first_rejected_id) {
    m_first_rejected_id = p.m_first_rejected_id;
    m_first_rejected_reason = p.m_first_rejected_reason;
  }
  m_outside_engine |= p.m_outside_engine;
  // The run's values (their sums are redone in replica order by summary()) and counts.
  RequestTally& a = m_all;
  const RequestTally& b = p.m_all;
  a.entered += b.entered;
  a.left += b.left;
  a.finished += b.finished;
  a.ttft_met += b.ttft_met;
  a.tpot_met += b.tpot_met;
  a.e2e_met += b.e2e_met;
  a.itl_met += b.itl_met;
  a.all_met += b.all_met;
  a.preemptions += b.preemptions;
  a.swap_preemptions += b.swap_preemptions;
  a.ttft.merge(b.ttft);
  a.tpot.merge(b.tpot);
  a.e2e.merge(b.e2e);
  a.itl.q.merge(b.itl.q);
  m_queue.merge(p.m_queue);
  m_engine_ttft.merge(p.m_engine_ttft);
  // Each replica's tally is whole in the one part that ran it.
  for (size_t i = 0; i < m_replicas.size() && i < p.m_replicas.size(); ++i)
    if (p.m_replicas[i].entered != 0 || p.m_replicas[i].left != 0)
      m_replicas[i] = std::move(p.m_replicas[i]);
}

namespace {

// A RequestTally's counts, in the order save_tally writes them.
template <class Tally, class F>
void tally_counts(Tally& t, F&& f) {
  for (auto* v : {&t.entered, &t.left, &t.finished, &t.ttft_met, &t.tpot_met, &t.e2e_met,
                  &t.itl_met, &t.all_met, &t.preemptions, &t.swap_preemptions})
    f(*v);
}

void save_tally(std::string& out, const RequestTally& t) {
  tally_counts(t, [&](const int64_t& v) { put_bytes(out, v); });
  put_bytes(out, t.queue_sum_s);
  put_bytes(out, t.engine_ttft_sum_s);
  t.ttft.save(out);
  t.tpot.save(out);
  t.e2e.save(out);
  t.itl.save(out);
}

void load_tally(ByteReader& in, RequestTally& t) {
  tally_counts(t, [&](int64_t& v) { v = in.get<int64_t>(); });
  t.queue_sum_s = in.get<double>();
  t.engine_ttft_sum_s = in.get<double>();
  t.ttft.load(in);
  t.tpot.load(in);
  t.e2e.load(in);
  t.itl.load(in);
}

// The run-wide counts a part keeps, in the order save_part writes them.
template <class S, class C, class F>
void part_counts(S& s, C& status, F&& f) {
  for (auto* v : {&s.requests, &s.finished, &s.rejected, &s.unfinished, &s.prompt_tokens,
                  &s.output_tokens, &s.preemptions, &s.swap_preemptions, &s.preempted_requests,
                  &status.finished, &status.rejected, &status.shed, &status.timed_out,
                  &status.cancelled, &status.failed, &status.unfinished})
    f(*v);
}

}  // namespace

void MetricsRecorder::save_part(std::string& out) const {
  part_counts(m_s, m_status, [&](const int64_t& v) { put_bytes(out, v); });
  put_bytes(out, m_first_arrival);
  put_bytes(out, m_last_release);
  put_bytes(out, m_first_rejected_id);
  put_string(out, m_first_rejected_reason);
  put_bytes(out, m_outside_engine);
  save_tally(out, m_all);
  m_queue.save(out);
  m_engine_ttft.save(out);
  // The replicas it ran: (replica, tally) for each that saw a request.
  uint64_t used = 0;
  for (const RequestTally& t : m_replicas) used += t.entered != 0 || t.left != 0;
  put_bytes(out, used);
  for (size_t i = 0; i < m_replicas.size(); ++i)
    if (m_replicas[i].entered != 0 || m_replicas[i].left != 0) {
      put_bytes(out, static_cast<uint64_t>(i));
      save_tally(out, m_replicas[i]);
    }
}

void MetricsRecorder::load_part(std::string_view bytes) {
  ByteReader in(bytes);
  part_counts(m_s, m_status, [&](int64_t& v) { v = in.get<int64_t>(); });
  m_first_arrival = in.get<Time>();
  m_last_release = in.get<Time>();
  m_first_rejected_id = in.get<uint64_t>();
  m_first_rejected_reason = in.get_string();
  m_outside_engine = in.get<bool>();
  load_tally(in, m_all);
  m_queue.load(in);
  m_engine_ttft.load(in);
  const auto used = in.get<uint64_t>();
  for (uint64_t k = 0; k < used; ++k) {
    const auto i = in.get<uint64_t>();
    if (i >= m_replicas.size()) throw std::logic_error("a part's replica out of range");
    load_tally(in, m_replicas[i]);
  }
  if (!in.done()) throw std::logic_error("a part's bytes run past its figures");
}

void MetricsRecorder::replica_order_sums() {
  double ttft = 0, tpot = 0, e2e = 0, queue = 0, engine_ttft = 0;
  GapSketch::Moments gaps;
  for (const RequestTally& t : m_replicas) {
    ttft += t.ttft.sum();
    tpot += t.tpot.sum();
    e2e += t.e2e.sum();
    queue += t.queue_sum_s;
    engine_ttft += t.engine_ttft_sum_s;
    gaps = GapSketch::fold(gaps, t.itl.moments());
  }
  m_all.ttft.set_sum(ttft);
  m_all.tpot.set_sum(tpot);
  m_all.e2e.set_sum(e2e);
  m_all.itl.set_moments(gaps);
  m_queue.set_sum(queue);
  m_engine_ttft.set_sum(engine_ttft);
}

}  // namespace servesim
