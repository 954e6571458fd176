#pragma once
// One replica's requests, waiting queue, running batch, KV memory and the step being planned.
// SchedulerView is what a scheduler sees and may change; BatchState adds what only the engine
// may do (take requests in, recycle slots, move time, hand KV between replicas). The engine owns
// a BatchState and gives its scheduler the view, so a scheduler cannot reach the engine's
// operations. All changes of a request's state go through the operations here, so the engine's
// invariants hold whatever the scheduler does.
#include <climits>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "core/adapter_gate.h"
#include "core/kv/kv_manager.h"
#include "core/request.h"
#include "core/slot_store.h"
#include "core/time.h"

namespace servesim {

/// A replica's request slots, by slot index; a slot's Request stays where it is while the
/// store grows (core/slot_store.h): 256 slots (94 KB) to a block.
using RequestSlots = SlotStore<Request, 8>;

enum class EntryKind : uint8_t {
  Prefill,  ///< computes `prefill_tokens` of the request's prefill
  Decode,   ///< computes one token, or verifies drafts (speculative decoding: see StepEntry)
  Padding,  ///< a finished sequence keeping its seat (static batching): costs, produces nothing
};

struct StepEntry {
  uint32_t slot = 0;
  EntryKind kind = EntryKind::Decode;
  /// Prefill: the chunk's tokens. Decode: 0 (one token), or with speculative decoding the
  /// verify's query tokens, 1 + the drafts it checks (at least 2; SchedulerView::decode_tokens
  /// or fewer, as the budget allows).
  int32_t prefill_tokens = 0;
  /// The tokens the entry computes: the chunk, the verify's query, or 1.
  [[nodiscard]] int32_t tokens() const {
    return prefill_tokens > 1 || kind == EntryKind::Prefill ? prefill_tokens : 1;
  }
};

/// The sums of the plan's leading one-token decodes, taken by a scheduler while it writes them
/// (the continuous scheduler's first pass reads each context anyway), so that the engine sizes
/// the step without walking them again: plan()[0, entries) are {slot, Decode, 0} entries and
/// `read` is the sum over them of context_tokens + 1, `longest` and `shortest` its extremes.
struct DecodeRun {
  uint32_t entries = 0;
  int64_t read = 0, longest = 0, shortest = INT64_MAX;
};

/// A decode of `tokens` tokens: one, or a verify of tokens - 1 drafts.
[[nodiscard]] inline StepEntry decode_entry(uint32_t slot, int64_t tokens) {
  return {slot, EntryKind::Decode, tokens > 1 ? static_cast<int32_t>(tokens) : 0};
}

/// A scheduler's side of a replica's batch (schedulers/scheduler.h).
class SchedulerView {
 public:
  SchedulerView(const SchedulerView&) = delete;
  SchedulerView& operator=(const SchedulerView&) = delete;

  [[nodiscard]] Time now() const { return m_now; }
  [[nodiscard]] Request& req(uint32_t slot) { return m_requests[slot]; }
  [[nodiscard]] const Request& req(uint32_t slot) const { return m_requests[slot]; }
  [[nodiscard]] KvManager& kv() { return *m_kv; }
  [[nodiscard]] const KvManager& kv() const { return *m_kv; }
  /// Queued requests (front = next): first come first served, preempted ones at the front; or,
  /// once the engine has called BatchState::set_priority_order, in (order_key, arrival, id)
  /// order, a preempted request going back to its place in that order.
  [[nodiscard]] const std::deque<uint32_t>& waiting() const { return m_waiting; }
  /// Whether waiting() is in (Request::order_key, arrival, id) order (Scheduler::priority_order).
  [[nodiscard]] bool priority_order() const { return m_priority_order; }
  /// Running requests in admission order (back = newest).
  [[nodiscard]] const std::vector<uint32_t>& running() const { return m_running; }
  /// The step being planned (cleared by the engine when the step ends).
  [[nodiscard]] std::vector<StepEntry>& plan() { return m_plan; }
  [[nodiscard]] const std::vector<StepEntry>& plan() const { return m_plan; }
  /// Records that the plan starts with the one-token decodes `run` describes (see DecodeRun).
  /// Any removal from the plan (a preemption) forgets it, so it only ever describes the plan.
  /// REQUIRES: run.entries <= plan().size() and the entries are as DecodeRun says.
  void set_decode_run(const DecodeRun& run) { m_decode_run = run; }
  /// Requests that produced their last token in the step just ended (valid in after_step).
  [[nodiscard]] int32_t finished_this_step() const { return m_finished_this_step; }
  /// True when no further arrival is known to be coming: the workload has delivered everything
  /// it has, though a reactive one may make more requests when a reply leaves.
  [[nodiscard]] bool arrivals_done() const { return m_arrivals_done; }
  /// Preemptions so far (every call of preempt() or preempt_swap()).
  [[nodiscard]] int64_t preemptions() const { return m_preemptions; }
  /// Preemptions by swapping so far (a subset of preemptions()).
  [[nodiscard]] int64_t swap_preemptions() const { return m_swap_preemptions; }
  /// Whether a queued request was preempted by swapping: its KV is in host memory and its
  /// computed context is kept; it resumes through swap_in_at().
  [[nodiscard]] bool swapped(uint32_t slot) const { return m_swapped[slot] != 0; }
  /// Tokens a decode of `r` computes in the step being planned: 1, or with speculative decoding
  /// on for this step (the `speculative` section, sim/speculative.h) the verify's 1 + k, k capped
  /// at the tokens the request still needs after this one. A policy that supports speculation
  /// (Scheduler::speculative_decoding) grows the request's KV by this much and charges it to
  /// its token budget; the engine credits 1 to 1 + k tokens when the step ends.
  [[nodiscard]] int32_t decode_tokens(const Request& r) const {
    if (m_speculative_k == 0) return 1;
    const int32_t left = r.spec.output_tokens - r.generated_tokens - 1;
    return 1 + (left < m_speculative_k ? (left > 0 ? left : 0) : m_speculative_k);
  }

  /// Multi-LoRA (docs/lora.md): whether the request in `slot` may join the step being planned
  /// under lora.max_loras (its adapter is already in the step, or the step holds fewer distinct
  /// adapters). Always true without a `lora` section or for a base-model request.
  [[nodiscard]] bool adapter_fits(uint32_t slot) {
    // Without a limit (most runs) the answer is yes, given inline without a call.
    return m_adapters.limit() <= 0 || adapter_fits_limited(slot);
  }
  /// For the step being planned, adapter_fits counts the running requests' adapters too,
  /// whether or not they are in the plan (SGLang's rule for its prefill-only batches).
  void count_running_adapters() { m_adapters.count_running(); }
  /// The first index of waiting() at or after `from` whose request adapter_fits, or
  /// waiting().size(): a scheduler's next admission when it passes over the others (vLLM V1).
  [[nodiscard]] size_t next_adapter_fit(size_t from) {
    while (from < m_waiting.size() && !adapter_fits(m_waiting[from])) ++from;
    return from;
  }
  /// Moves the front of the waiting queue to the running batch; its first `cached_tokens` of
  /// prefill count as computed (a prefix-cache hit).
  /// REQUIRES: the KV manager has already admitted it (kv().try_admit succeeded with them).
  void admit_front(int64_t cached_tokens = 0);
  /// admit_front for the request at `index` of the waiting queue (a policy that picks from the
  /// queue out of order, such as SGLang's longest-prefix-match). REQUIRES: as admit_front's.
  void admit_at(size_t index, int64_t cached_tokens = 0);
  /// Preemption by recompute: frees its KV, drops it from the plan, puts it at the front of the
  /// queue (priority order: at its place); it will prefill its prompt plus every token
  /// generated so far.
  void preempt(uint32_t slot);
  /// Preemption by swapping (vLLM V0's preemption_mode: swap): frees its GPU KV, drops it from
  /// the plan and puts it at the front of the queue like preempt(), but keeps its computed
  /// context (no recompute). The caller accounts for the host memory and the transfer time.
  void preempt_swap(uint32_t slot);
  /// Resumes the swapped request at `index` of the waiting queue with its context as it was.
  /// REQUIRES: swapped(it); the KV manager has already given it room (kv().try_swap_in).
  void swap_in_at(size_t index);
  /// Time added to the step being planned (a KV transfer to or from host memory). It
  /// accumulates until the engine takes it for the next step it starts.
  void add_step_overhead(Time t) { m_step_overhead = m_step_overhead + t; }
  /// Releases a finished request: its reply leaves now and its KV is freed. The slot stays
  /// valid until the engine recycles it after the step (see BatchState::departed).
  void release(uint32_t slot);
  /// Releases the first `count` running requests that are done (SchedulerView::release each),
  /// in running() order, keeping the others' order: one walk of the batch up to the last of
  /// them. Fewer when fewer are done. In a large batch the walk starts at the first of the
  /// step's finished where the engine gave it (BatchState::set_finished_this_step), found by its
  /// admission order (running()'s) instead of walked to; it is forgotten then.
  void release_done(int32_t count);
  /// The batches from which release_done searches for the step's first finished instead of
  /// walking to it (a walk passes about 9 instructions a request, a search step about 10).
  static constexpr size_t k_search_batch = 32;
  /// Asks to be scheduled again at `t` if nothing else happens first.
  void wake_at(Time t);

 protected:
  explicit SchedulerView(std::unique_ptr<KvManager> kv);
  SchedulerView(SchedulerView&&) noexcept = default;  // the engine keeps replicas in a vector
  SchedulerView& operator=(SchedulerView&&) noexcept = default;
  ~SchedulerView() = default;

  /// Puts `slot` in the waiting queue: at the front (`front`) or the back, or in priority order
  /// at its place by (Request::order_key, arrival, id).
  void put_waiting(uint32_t slot, bool front);
  /// adapter_fits under a lora.max_loras limit.
  [[nodiscard]] bool adapter_fits_limited(uint32_t slot);
  /// release() but for taking the request out of running().
  void leave(uint32_t slot);
  /// Removes waiting()[index] from the queue, the others keeping their order, and returns it.
  uint32_t take_waiting(size_t index);

  RequestSlots m_requests;
  std::vector<uint32_t> m_free;
  std::vector<uint8_t> m_swapped;  // by slot: 1 while queued after preempt_swap
  std::vector<uint32_t> m_departed;
  std::deque<uint32_t> m_waiting;
  std::vector<uint32_t> m_running;
  std::vector<StepEntry> m_plan;
  DecodeRun m_decode_run;  // the plan's leading decodes, when the scheduler gave them
  std::unique_ptr<KvManager> m_kv;
  Time m_now;
  Time m_wake = Time::max();
  Time m_step_overhead = Time::ns(0);
  uint32_t m_admissions = 0;
  int64_t m_preemptions = 0;
  int64_t m_swap_preemptions = 0;
  int32_t m_finished_this_step = 0;
  uint32_t m_first_finished = UINT32_MAX;  // BatchState::set_finished_this_step's `first`
  bool m_arrivals_done = false;
  bool m_hold_kv_on_release = false;
  bool m_priority_order = false;
  int32_t m_speculative_k = 0;  // draft tokens a decode verifies this step; 0: no speculation
  AdapterGate m_adapters;       // lora.max_loras distinct adapters per step
};

/// The engine's side: a SchedulerView plus taking requests in and out, time, and what the
/// engine takes back from a planned step. Only sim/ calls these.
class BatchState : public SchedulerView {
 public:
  explicit BatchState(std::unique_ptr<KvManager> kv) : SchedulerView(std::move(kv)) {}

  /// The plan's leading decodes as the scheduler gave them (entries 0: none), forgotten here.
  [[nodiscard]] DecodeRun take_decode_run() { return std::exchange(m_decode_run, DecodeRun{}); }
  /// The overhead accumulated so far for the next step (take_step_overhead's, not reset).
  [[nodiscard]] Time step_overhead() const { return m_step_overhead; }
  /// The overhead accumulated for the step being started, reset to zero.
  [[nodiscard]] Time take_step_overhead() {
    const Time t = m_step_overhead;
    m_step_overhead = Time::ns(0);
    return t;
  }

  // Prefill/decode disaggregation (engine side, docs/cluster.md).
  /// A prefill replica keeps a released request's KV held until free_held_kv(), so that its
  /// KV transfer can read it (and the replica's memory stays full while it waits).
  void set_hold_kv_on_release(bool hold) { m_hold_kv_on_release = hold; }
  /// Frees the KV a released request still holds (after set_hold_kv_on_release).
  void free_held_kv(uint32_t slot) { m_kv->release(m_requests[slot]); }
  /// Puts a request whose prefill ran elsewhere straight into the running batch, decoding.
  /// REQUIRES: its context and generated tokens are set and kv().try_admit succeeded for it.
  void admit_prefilled(uint32_t slot);

  // Engine side. Slots are recycled: only requests in flight (queued, running, or released
  // but not yet recorded) occupy one, so memory follows the load, not the trace's length.
  /// Takes a request in: a free slot (or a new one) holds it, in state Pending. Inline: the
  /// copy of its spec is most of it, and the call cost about 20 instructions a request more.
  uint32_t add_request(const RequestSpec& spec) {
    uint32_t slot = 0;
    if (m_free.empty()) {
      slot = new_slot();
    } else {
      slot = m_free.back();
      m_free.pop_back();
    }
    Request& r = m_requests[slot];
    r.spec = spec;
    r.prefill_target = spec.prompt_tokens;
    return slot;
  }
  /// Frees a slot whose request has left (released or rejected) and been recorded.
  void recycle(uint32_t slot);
  /// Released requests since the last call, in release order; the caller recycles them.
  [[nodiscard]] std::vector<uint32_t>& departed() { return m_departed; }
  /// Requests holding a slot (in flight).
  [[nodiscard]] size_t live() const { return m_requests.size() - m_free.size(); }
  /// Puts a request just added in the waiting queue (at the back, or in priority order at its
  /// place). Inline: once a request, and most runs' queue is first come first served.
  void enqueue(uint32_t slot) {
    m_requests[slot].state = RequestState::Queued;
    if (m_priority_order)
      put_waiting(slot, false);
    else
      m_waiting.push_back(slot);
  }
  /// Keeps the waiting queue in (Request::order_key, arrival, id) order from now on (a scheduler
  /// whose Scheduler::priority_order() is true). REQUIRES: the queue is empty.
  void set_priority_order(bool on) { m_priority_order = on; }
  void reject(uint32_t slot, std::string reason);
  /// The client gave up on a queued or running request (`cause`: TimedOut or Cancelled): it
  /// leaves the queue or the batch and the step being planned, its KV is freed now, and it is
  /// Abandoned with release = now. The caller records and recycles it.
  /// REQUIRES: queued (not swapped out) or running.
  void abandon(uint32_t slot, EndCause cause, std::string reason);
  void set_now(Time t) { m_now = t; }
  /// Whether the workload has nothing more known to arrive. With a reactive source (sessions,
  /// closed-loop users) this can become false again when a departure makes a request ready.
  void set_arrivals_done(bool done = true) { m_arrivals_done = done; }
  /// `n` requests finished in the step just ended; `first`: the slot of the earliest admitted
  /// of them (SchedulerView::release_done starts there), UINT32_MAX where not given.
  void set_finished_this_step(int32_t n, uint32_t first = UINT32_MAX) {
    m_finished_this_step = n;
    m_first_finished = first;
  }
  /// Speculative decoding for the step about to be planned: `k` draft tokens per decode (0:
  /// off). It stays set until the step ends, so decode_tokens() gives the same then.
  void set_speculative_k(int32_t k) { m_speculative_k = k; }
  /// Multi-LoRA: at most `max_loras` distinct adapters per step (0: no limit).
  void set_max_loras(int32_t max_loras) { m_adapters.set_limit(max_loras); }
  /// A step is about to be planned (the adapter gate forgets the last one's adapters).
  void begin_adapter_step() { m_adapters.begin_step(); }
  /// Requests passed over for a step because its adapters were at max_loras (per step).
  [[nodiscard]] int64_t adapter_skips() const { return m_adapters.skips(); }
  [[nodiscard]] Time take_wake() {
    Time t = m_wake;
    m_wake = Time::max();
    return t;
  }
  /// Every slot; free ones hold a request in state Pending. A slot's address is stable for the
  /// state's life: adding requests moves none.
  [[nodiscard]] const RequestSlots& slots() const { return m_requests; }
  [[nodiscard]] RequestSlots& mutable_slots() { return m_requests; }
  /// The running batch, for an engine that hides some of it while the scheduler plans (the
  /// batches in flight of sim/pipeline_engine.h) and puts them back in order after.
  [[nodiscard]] std::vector<uint32_t>& mutable_running() { return m_running; }

 private:
  /// A slot past the last, for add_request when none is free.
  uint32_t new_slot();
};

}  // namespace servesim
