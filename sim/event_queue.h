#pragma once
// The engine's events: what each is (a tagged payload) and the order they run in.
//
// Events are ordered by (time, phase, sequence number given when posted). Phases at one instant
// run in this order:
//   0 step end  - the step's tokens are credited and finished requests may be released;
//   1 transfer  - disaggregation only: a KV transfer's link shares change (link tick), or its
//                 KV is delivered to a decode replica (which admits it if its memory can hold it);
//   2 arrival   - a request is due from the workload, or reaches the router after its delay;
//   3 timer     - a wake-up a scheduler asked for (dynamic batching's queue delay), or an
//                 autoscaler's decision or a provisioned replica going live (sim/autoscaler.h);
//   4 schedule  - if the engine is idle, the scheduler plans the next step.
// Two events of one phase at one instant run in replica order (step ends, timers and schedules
// name their replica; other events count as replica 0), then in the order they were posted, so
// a run is deterministic whatever the heap does with ties. Replica order first makes a
// cluster's order at one instant a merge of its replicas' own orders, which the parallel engine
// (sim/parallel_engine.h) reproduces with each replica's events in a queue of its own.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/time.h"

namespace servesim {

/// What an event is, and so what its payload names.
enum class EventKind : uint8_t {
  StepEnd,    ///< replica: its step in flight ends
  LinkTick,   ///< (none): a KV transfer may have finished sending
  Delivered,  ///< transfer: its KV reached the decode replica
  Arrival,    ///< (none): the request due from the workload (or made ready by a departure)
  Routed,     ///< (none): the request at the front of the router's queue reaches the router
  Timer,      ///< replica: the wake-up its scheduler asked for
  Autoscale,  ///< replica going live, or Event::k_autoscale_tick: an autoscaler decision
  Schedule,   ///< replica: plan its next step if idle
};

/// The phase an event kind runs in at its instant (see above).
[[nodiscard]] constexpr uint8_t phase_of(EventKind k) {
  switch (k) {
    case EventKind::StepEnd:
      return 0;
    case EventKind::LinkTick:
    case EventKind::Delivered:
      return 1;
    case EventKind::Arrival:
    case EventKind::Routed:
      return 2;
    case EventKind::Timer:
    case EventKind::Autoscale:
      return 3;
    case EventKind::Schedule:
      return 4;
  }
  return 5;
}

/// One event: its time, kind and the kind's payload. 24 bytes: the queue moves these on every
/// push and pop. Build one with the named constructors; read the payload through the accessor
/// its kind names.
class Event {
 public:
  static Event step_end(Time t, uint32_t replica) {
    return {t, EventKind::StepEnd, replica, replica};
  }
  static Event timer(Time t, uint32_t replica) { return {t, EventKind::Timer, replica, replica}; }
  static Event schedule(Time t, uint32_t replica) {
    return {t, EventKind::Schedule, replica, replica};
  }
  static Event arrival(Time t) { return {t, EventKind::Arrival, 0}; }
  static Event routed(Time t) { return {t, EventKind::Routed, 0}; }
  static Event link_tick(Time t) { return {t, EventKind::LinkTick, 0}; }
  static Event delivered(Time t, uint32_t transfer) { return {t, EventKind::Delivered, transfer}; }
  /// Autoscale's payload for a decision (otherwise the replica going live); orders as replica 0.
  static constexpr uint32_t k_autoscale_tick = 0xffffffffu;
  static Event autoscale(Time t, uint32_t what) { return {t, EventKind::Autoscale, what}; }

  [[nodiscard]] Time time() const { return m_t; }
  [[nodiscard]] EventKind kind() const { return m_kind; }
  /// StepEnd, Timer, Schedule: the replica.
  [[nodiscard]] uint32_t replica() const { return m_payload; }
  /// Autoscale: the replica going live, or k_autoscale_tick.
  [[nodiscard]] uint32_t autoscale_target() const { return m_payload; }
  /// Delivered: the transfer (KvTransfers' id).
  [[nodiscard]] uint32_t transfer() const { return m_payload; }

  /// Later in the run: by time, then phase, then replica, then the order posted.
  [[nodiscard]] bool operator>(const Event& o) const {
    if (m_t != o.m_t) return m_t > o.m_t;
    if (m_phase != o.m_phase) return m_phase > o.m_phase;
    if (m_replica != o.m_replica) return m_replica > o.m_replica;
    return m_seq > o.m_seq;
  }
  /// The replica that orders it among its phase's events at its instant (0: none).
  [[nodiscard]] uint32_t order_replica() const { return m_replica; }

 private:
  friend class EventQueue;
  Event(Time t, EventKind k, uint32_t payload, uint32_t replica = 0)
      : m_t(t),
        m_payload(payload),
        m_replica(static_cast<uint16_t>(replica)),
        m_kind(k),
        m_phase(phase_of(k)) {}

  Time m_t;
  uint64_t m_seq = 0;  // given by EventQueue::post
  uint32_t m_payload;
  uint16_t m_replica;  // a cluster has at most 4,096 replicas
  EventKind m_kind;
  uint8_t m_phase;
};
static_assert(sizeof(Event) == 24);

/// The future events of one run, earliest first. A binary heap written out rather than
/// std::priority_queue: the event being placed stays in registers while the others move, where
/// the library's version copied it through the stack on every push and pop (a store-forwarding
/// stall twice a step). The order is the same: (time, phase, sequence) is a total order.
///
/// The earliest event may wait beside the heap instead (`m_front`): an event posted earlier
/// than everything queued (a step's end, before the next arrival) goes there and is popped
/// without moving the heap; one posted earlier than it pushes it into the heap. So the slot,
/// when full, holds the least event, and top() and pop() take it first: the same order.
class EventQueue {
 public:
  /// Room for `n` events before the first reallocation.
  void reserve(size_t n) { m_heap.reserve(n); }
  void post(Event e) {
    e.m_seq = m_seq++;
    if (!m_has_front) {
      if (m_heap.empty() || m_heap.front() > e) {
        m_front = e;
        m_has_front = true;
        return;
      }
    } else if (m_front > e) {
      std::swap(m_front, e);  // e, the former least, goes into the heap
    }
    push(e);
  }
  [[nodiscard]] bool empty() const { return !m_has_front && m_heap.empty(); }
  [[nodiscard]] const Event& top() const { return m_has_front ? m_front : m_heap.front(); }
  void pop() {
    if (m_has_front) {
      m_has_front = false;
      return;
    }
    const Event last = m_heap.back();
    m_heap.pop_back();
    const size_t n = m_heap.size();
    if (n == 0) return;
    size_t i = 0;
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && m_heap[child] > m_heap[child + 1]) ++child;
      if (!(last > m_heap[child])) break;
      m_heap[i] = m_heap[child];
      i = child;
    }
    m_heap[i] = last;
  }

 private:
  void push(const Event& e) {
    size_t i = m_heap.size();
    m_heap.push_back(e);
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!(m_heap[parent] > e)) break;
      m_heap[i] = m_heap[parent];
      i = parent;
    }
    m_heap[i] = e;
  }

  std::vector<Event> m_heap;
  Event m_front{Time(), EventKind::StepEnd, 0};  // the least event, when m_has_front
  bool m_has_front = false;
  uint64_t m_seq = 0;
};

}  // namespace servesim
