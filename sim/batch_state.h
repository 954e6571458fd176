#pragma once
// What a scheduler sees and may change: the requests, the waiting queue, the running batch, the
// KV memory and the step being planned. All changes of a request's state go through the
// operations here, so the engine's invariants hold whatever the scheduler does.
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/kv_manager.h"
#include "sim/request.h"
#include "sim/time.h"

namespace servesim {

enum class EntryKind : uint8_t {
  Prefill,  ///< computes `prefill_tokens` of the request's prefill
  Decode,   ///< computes one token
  Padding,  ///< a finished sequence keeping its seat (static batching): costs, produces nothing
};

struct StepEntry {
  uint32_t slot = 0;
  EntryKind kind = EntryKind::Decode;
  int32_t prefill_tokens = 0;
};

class BatchState {
 public:
  explicit BatchState(std::unique_ptr<KvManager> kv);

  [[nodiscard]] Time now() const { return m_now; }
  [[nodiscard]] Request& req(uint32_t slot) { return m_requests[slot]; }
  [[nodiscard]] const Request& req(uint32_t slot) const { return m_requests[slot]; }
  [[nodiscard]] KvManager& kv() { return *m_kv; }
  [[nodiscard]] const KvManager& kv() const { return *m_kv; }
  /// Queued requests, first come first served (front = next). Preempted ones go to the front.
  [[nodiscard]] const std::deque<uint32_t>& waiting() const { return m_waiting; }
  /// Running requests in admission order (back = newest).
  [[nodiscard]] const std::vector<uint32_t>& running() const { return m_running; }
  /// The step being planned (cleared by the engine when the step ends).
  [[nodiscard]] std::vector<StepEntry>& plan() { return m_plan; }
  [[nodiscard]] const std::vector<StepEntry>& plan() const { return m_plan; }
  /// Requests that produced their last token in the step just ended (valid in after_step).
  [[nodiscard]] int32_t finished_this_step() const { return m_finished_this_step; }
  /// True when no further arrival is known to be coming: the workload has delivered everything
  /// it has, though a reactive one may make more requests when a reply leaves.
  [[nodiscard]] bool arrivals_done() const { return m_arrivals_done; }
  /// Preemptions so far (every call of preempt()).
  [[nodiscard]] int64_t preemptions() const { return m_preemptions; }

  /// Moves the front of the waiting queue to the running batch; its first `cached_tokens` of
  /// prefill count as computed (a prefix-cache hit).
  /// REQUIRES: the KV manager has already admitted it (kv().try_admit succeeded with them).
  void admit_front(int64_t cached_tokens = 0);
  /// Preemption by recompute: frees its KV, drops it from the plan, puts it at the front of the
  /// queue; it will prefill its prompt plus every token generated so far.
  void preempt(uint32_t slot);
  /// Releases a finished request: its reply leaves now and its KV is freed. The slot stays
  /// valid until the engine recycles it after the step (see take_departed).
  void release(uint32_t slot);
  /// Asks to be scheduled again at `t` if nothing else happens first.
  void wake_at(Time t);

  // Engine side. Slots are recycled: only requests in flight (queued, running, or released
  // but not yet recorded) occupy one, so memory follows the load, not the trace's length.
  uint32_t add_request(const RequestSpec& spec);
  /// Frees a slot whose request has left (released or rejected) and been recorded.
  void recycle(uint32_t slot);
  /// Released requests since the last call, in release order; the caller recycles them.
  [[nodiscard]] std::vector<uint32_t>& departed() { return m_departed; }
  /// Requests holding a slot (in flight).
  [[nodiscard]] size_t live() const { return m_requests.size() - m_free.size(); }
  void enqueue(uint32_t slot);
  void reject(uint32_t slot, std::string reason);
  void set_now(Time t) { m_now = t; }
  /// Whether the workload has nothing more known to arrive. With a reactive source (sessions,
  /// closed-loop users) this can become false again when a departure makes a request ready.
  void set_arrivals_done(bool done = true) { m_arrivals_done = done; }
  void set_finished_this_step(int32_t n) { m_finished_this_step = n; }
  [[nodiscard]] Time take_wake() {
    Time t = m_wake;
    m_wake = Time::max();
    return t;
  }
  /// Every slot; free ones hold a request in state Pending.
  [[nodiscard]] const std::vector<Request>& slots() const { return m_requests; }
  [[nodiscard]] std::vector<Request>& mutable_slots() { return m_requests; }

 private:
  std::vector<Request> m_requests;
  std::vector<uint32_t> m_free;
  std::vector<uint32_t> m_departed;
  std::deque<uint32_t> m_waiting;
  std::vector<uint32_t> m_running;
  std::vector<StepEntry> m_plan;
  std::unique_ptr<KvManager> m_kv;
  Time m_now;
  Time m_wake = Time::max();
  uint32_t m_admissions = 0;
  int64_t m_preemptions = 0;
  int32_t m_finished_this_step = 0;
  bool m_arrivals_done = false;
};

}  // namespace servesim
