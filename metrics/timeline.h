#pragma once
// timeline.json (servesim run --timeline): the run as a Chrome trace (the Trace Event Format's
// JSON object form), which Perfetto (ui.perfetto.dev) and chrome://tracing open.
#include <fmt/format.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "sim/recorder.h"
#include "sim/step_observer.h"

namespace servesim {

/// Process 1, "replicas": one thread (track) per replica, one complete ("X") event per step,
/// named "step N: P prefill / D decode" (N counts the replica's steps from 0), with the step's
/// shape and state in args. Process 2, "requests": one thread per request whose id is below
/// `max_requests`, holding a "request ID" span from arrival to release and, inside it, the
/// spans "queued" (arrival to first admission), "prefill" (first admission to first token),
/// "decode" (first token to the last token's step end) and "batch wait" (to release, when a
/// static or dynamic batch holds the reply); empty spans are left out. A preempted request's
/// later waits fall inside its prefill or decode span (args.preemptions says how many). A
/// rejected request gets an instant event "rejected"; one a bounded run left unserved gets
/// the spans it started and an instant "unfinished" at the end of the last step.
///
/// Replica tracks are named "replica R", and in a cluster with pools "replica R (pool NAME,
/// ROLE)". Beside each replica's steps, two counter ("C") tracks of process 1, sampled at each
/// step's start: "KV replica R" {used_tokens} and "queue replica R" {waiting, running} (the
/// step's kv_used_tokens, waiting and running). In a disaggregated run, process 3, "kv
/// transfers", holds one async slice per transferred request ("kv transfer ID", its KV on the
/// links from the end of its prefill to its delivery, args from, to) and, when the decode
/// replica had no room at once, "admit wait ID" (delivery to admission); the request's own
/// track gets "kv transfer" and "admit wait" inside its "decode" span. Transfers of requests
/// at or above `max_requests` are left out, as their tracks are.
///
/// Timestamps (ts) and durations (dur) are microseconds with three decimals: exact nanoseconds.
/// Events stream to `out` as they happen (steps in start order, requests as they leave), so
/// memory stays bounded: one step counter per replica. Steps reuse a buffer: no allocation.
class TimelineWriter final : public StepObserver, public RequestRecorder {
 public:
  /// Writes the opening and the process names. REQUIRES: `out` outlives this writer.
  TimelineWriter(std::ostream& out, uint64_t max_requests);
  void on_start(uint32_t replicas, const std::vector<PoolSpec>& pools) override;
  void on_step(const StepRecord& s) override;
  void on_transfer(const TransferRecord& t) override;
  void record(const Request& r) override;
  /// Closes the JSON (the file is not valid JSON before) and flushes. Idempotent.
  void finish();

 private:
  void begin_event();
  void flush_if_full();
  void span(const char* name, uint64_t id, Time from, Time to);
  void name_replicas(uint32_t up_to);
  void async_slice(const char* name, const TransferRecord& t, Time from, Time to);

  std::ostream& m_out;
  uint64_t m_max_requests;
  fmt::memory_buffer m_buf;
  std::vector<int64_t> m_replica_steps;  ///< steps so far, per replica (named on its first)
  std::vector<PoolSpec> m_pools;         ///< cluster.pools, for the track names
  bool m_transfers_named = false;        ///< process 3 named (on the first transfer)
  Time m_last_step_end;
  bool m_finished = false;
};

}  // namespace servesim
