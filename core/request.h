#pragma once
// One request and its lifecycle. The engine owns every Request; schedulers change their state
// only through BatchState's operations (admit, preempt, release), never directly.
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"

namespace servesim {

/// Lifecycle: Queued -> Running (prefilling, then decoding) -> Finished -> Released.
/// A running request may go back to Queued when preempted. A request that can never be served
/// goes straight from arrival to Rejected, with a reason; so does one the `admission` section
/// refuses (sim/admission.h). A queued or running request whose client gives up (the
/// `abandonment` section: a timeout, a cancellation) goes to Abandoned, its KV freed at once;
/// so does one whose replica fails (cluster.failures) when it is not retried (end cause Failed).
/// Request::prefill_replica of a request that never changed replica.
inline constexpr uint32_t k_no_replica = UINT32_MAX;

enum class RequestState : uint8_t {
  Pending,
  Queued,
  Running,
  Finished,
  Released,
  Rejected,
  Abandoned
};

/// Why a request left without being served, beyond its state: a Rejected request is `None`
/// (it can never fit), `Refused` (the admission section's queue cap or SLO check) or `Shed`
/// (over its tenant's rate limit); an Abandoned one is `TimedOut`, `Cancelled` or `Failed` (its
/// replica failed and it was not retried, sim/failures.h; also a Rejected one that arrived while
/// every replica was down under on_failure: fail).
enum class EndCause : uint8_t { None, Refused, Shed, TimedOut, Cancelled, Failed };

/// What a workload source produces.
struct RequestSpec {
  uint64_t id = 0;  ///< order in the input (0-based), the key of requests.csv
  Time arrival;
  int32_t prompt_tokens = 0;  ///< >= 1
  int32_t output_tokens = 0;  ///< >= 1: the prefill step produces the first one
  /// What the trace says about the prompt's content, for prefix caching: one id per leading
  /// block of `hash_block_tokens` prompt tokens (Mooncake's `hash_ids`). Two requests whose ids
  /// agree up to block k share their first k+1 blocks of tokens. Empty when the trace is silent.
  std::vector<uint64_t> block_hashes;
  int32_t hash_block_tokens = 0;  ///< tokens per entry of block_hashes (0 when empty)
  /// Non-zero: the request's tokens are positions of a shared, append-only stream (a
  /// conversation: each turn's prompt is the whole context so far plus new tokens), so token
  /// k of any request of the stream is the same token. 0: only block_hashes say what is shared.
  uint64_t content_stream = 0;
  /// Non-zero: the conversation (session) this request is a turn of, for statistics; 0: none.
  uint64_t session = 0;
  /// Non-zero: the most output the request may ask for (its max_tokens, a trace column), which
  /// a KV policy with kv.max_output_tokens reserves instead of that default; 0: not given.
  int32_t max_output_tokens = 0;
  /// The `api` section (sim/api_latency.h): time from the client's send to the engine's arrival
  /// (coalescing wait, server overhead, tokenization), and from a token's production to the
  /// client (streaming). Both 0 without it; the engine's times are then the client's.
  Time api_in;
  Time api_out;
  /// The request's class: an index into the run's class names (WorkloadSource::class_names),
  /// which is empty when the workload names no class (then every request has class 0).
  uint16_t class_id = 0;
  /// vLLM's priority: a lower value is served first (scheduling_policy: priority); default 0.
  int32_t priority = 0;
  /// The request's tenant: an index into the run's tenant names (WorkloadSource::tenant_names),
  /// which is empty when the workload names no tenant (then every request has tenant 0).
  uint16_t tenant_id = 0;
  /// Multi-LoRA (the `lora` section, docs/lora.md): the adapter it runs with, 1..adapters, or
  /// 0 for the base model.
  uint32_t adapter = 0;
  bool adapter_given = false;  ///< the trace named it (its `adapter` column): none is drawn
  /// Its class's time-to-first-token target (a mix component's ttft_slo_ms), which the edf
  /// queue order turns into the deadline arrival + ttft_slo; 0: none (served after those
  /// that have one).
  Time ttft_slo;
  /// Non-zero: the client cancels the request once it has this many output tokens (a trace
  /// column, or the `abandonment.cancel` draw); 0: never. Only a value below output_tokens
  /// cancels anything.
  int32_t cancel_after_tokens = 0;
  /// Non-zero: its class's client timeout (a mix component's timeout_s), which replaces
  /// abandonment.timeout_s for it; 0: the section's.
  Time timeout;
  /// Non-zero: the client cancels the request this long after its arrival at the engine, served
  /// or not (a trace's cancel_after_s column, or the abandonment.cancel.after_s draw); 0: never.
  Time cancel_after;
  /// Times it was retried after its replica failed (cluster.failures); it keeps its arrival.
  int32_t retries = 0;
};

/// The most classes a run may name (class ids are 16-bit).
inline constexpr size_t k_max_classes = 1024;
/// The most tenants a run may name (tenant ids are 16-bit).
inline constexpr size_t k_max_tenants = 1024;

struct Request {
  RequestSpec spec;
  RequestState state = RequestState::Pending;

  /// KV tokens computed and stored so far (prompt, then each decoded input token).
  int32_t context_tokens = 0;
  /// Tokens the current prefill must compute: the prompt, or after a preemption by recompute
  /// the prompt plus every token generated so far. Prefill is done when context == target.
  int32_t prefill_target = 0;
  int32_t generated_tokens = 0;  ///< output tokens produced so far
  int64_t kv_held_tokens = 0;    ///< KV capacity held (reserved or allocated), in tokens
  int32_t preemptions = 0;
  int32_t swap_preemptions = 0;  ///< of `preemptions`, those by swapping (preemption_mode: swap)
  uint32_t replica = 0;          ///< the replica serving it (0 without a cluster)
  /// Disaggregation: the prefill replica that produced its first token before its KV moved to
  /// `replica`; k_no_replica when the request ran on `replica` alone.
  uint32_t prefill_replica = k_no_replica;
  int32_t prefill_preemptions = 0;       ///< of `preemptions`, those on prefill_replica
  int32_t prefill_swap_preemptions = 0;  ///< of `swap_preemptions`, those on prefill_replica
  uint32_t admission_seq = 0;  ///< order of the latest admission, for newest-first preemption
  /// The waiting queue's key when the scheduler orders it (Scheduler::queue_key, set by the
  /// engine at arrival): the queue is in (order_key, arrival, id) order, lowest first.
  int64_t order_key = 0;

  // Prefix caching (kv.prefix_caching): the KV blocks held, in order; identities of the
  // prompt's blocks worked out from block_hashes at first admission; how many held blocks
  // have been entered in the cache.
  std::vector<int32_t> kv_blocks;
  std::vector<uint64_t> kv_block_keys;
  int32_t kv_keyed_blocks = 0;
  int64_t cached_prompt_tokens = 0;  ///< prefill tokens skipped thanks to the prefix cache

  Time first_admitted = Time::max();
  Time first_token = Time::max();
  Time last_token = Time::max();
  Time finish = Time::max();   ///< end of the step that produced the last token
  Time release = Time::max();  ///< when the reply left the engine
  std::string reject_reason;
  EndCause end_cause = EndCause::None;  ///< with state Rejected or Abandoned
  /// The times above are the client's (the `api` section's to_client_view has run): arrival is
  /// the send time and token times are when the client has them. False while in the engine.
  bool client_view = false;

  [[nodiscard]] bool prefilling() const { return context_tokens < prefill_target; }
  [[nodiscard]] bool done() const { return generated_tokens >= spec.output_tokens; }
  /// The most KV tokens this request ever holds: the prompt plus every output token but the
  /// last, which is produced but never fed back.
  [[nodiscard]] int64_t peak_kv_tokens() const {
    return int64_t{spec.prompt_tokens} + spec.output_tokens - 1;
  }
  /// The engine's time to first token, from its arrival at the engine (after the API server)
  /// to the token's production (before streaming): the client's TTFT less api_in and api_out.
  /// REQUIRES: a first token. The same as first_token - arrival without the `api` section.
  [[nodiscard]] Time engine_ttft() const {
    const Time ttft = first_token - spec.arrival;
    return client_view ? ttft - spec.api_in - spec.api_out : ttft;
  }
};

/// How a request ended, as requests.csv's status column and summary.json's counts name it:
/// finished, rejected, shed, timed_out, cancelled, failed (its replica failed), or unfinished (a
/// bounded run stopped first).
[[nodiscard]] inline const char* status_name(const Request& r) {
  if (r.end_cause == EndCause::Failed) return "failed";
  switch (r.state) {
    case RequestState::Released:
      return "finished";
    case RequestState::Rejected:
      return r.end_cause == EndCause::Shed ? "shed" : "rejected";
    case RequestState::Abandoned:
      return r.end_cause == EndCause::Cancelled ? "cancelled" : "timed_out";
    default:
      return "unfinished";
  }
}

}  // namespace servesim
