#pragma once
// Batching policies: which requests run in the next engine step.
//
// CONTRACT. The engine calls plan_step() when it is idle, after every event at the current
// instant has been applied, so a request that arrives exactly when a step ends is visible. The
// scheduler fills state.plan() with the next step (leaving it empty keeps the engine idle; it
// may then call state.wake_at() to be asked again later). It changes requests only through
// SchedulerView (admit_front, preempt, release) and KV only through state.kv(). Every step it plans
// must make progress (a prefill chunk of at least one token, or a decode). After the step the
// engine credits the tokens and calls after_step(), which must eventually release every finished
// request. A scheduler holds no random state: the same inputs give the same plans.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/batch_state.h"
#include "core/config.h"

namespace servesim {

/// Why a scheduler cannot run on a replica's KV pool: the scheduler key to change and the
/// message (empty when it can).
struct KvMismatch {
  std::string key;
  std::string message;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual void plan_step(SchedulerView& state) = 0;
  virtual void after_step(SchedulerView& state) = 0;
  /// Why this policy can never serve the request whatever the load (empty when it can).
  [[nodiscard]] virtual std::string never_schedulable(const Request& /*r*/) const { return {}; }
  /// The most requests this policy runs at once (its seats: max_num_seqs and the like). A
  /// disaggregated decode replica admits delivered requests only while fewer run.
  [[nodiscard]] virtual int64_t max_running() const { return INT64_MAX; }
  /// True when the policy orders its waiting queue: the engine then sets each arriving
  /// request's Request::order_key to queue_key() and keeps the queue in (order_key, arrival,
  /// id) order (SchedulerView::waiting). Policies that serve in arrival order keep the default,
  /// first come first served.
  [[nodiscard]] virtual bool priority_order() const { return false; }
  /// The waiting-queue key of a request as it arrives (lowest first), when priority_order():
  /// by default its priority (vLLM's meaning); schedulers/queue_order.h gives the others (a
  /// predicted output length, a deadline). Must depend on the request alone.
  [[nodiscard]] virtual int64_t queue_key(const Request& r) const { return r.spec.priority; }
  /// Called once, when the scenario is built, with this replica's own KV manager (a pool's
  /// own kv section included): a policy that depends on the KV pool takes what it needs here
  /// (trtllm its chunk unit, the block size; swap preemption the KV bytes of a token).
  [[nodiscard]] virtual KvMismatch bind_kv(const KvManager& /*kv*/) { return {}; }
  /// True when the policy plans speculative decoding's verify steps: each decode grows its KV
  /// and spends its token budget by SchedulerView::decode_tokens (docs/speculative.md). The
  /// scenario refuses a `speculative` section for a policy that does not.
  [[nodiscard]] virtual bool speculative_decoding() const { return false; }
  /// Decode streaks (sim/decode_streak.cpp): a positive limit promises that whenever every
  /// running request is decoding, at most this many run, the KV manager has room for each
  /// one's next token and admits_nothing() says so once that room is taken, plan_step plans
  /// exactly one one-token decode per running request in running() order and changes nothing
  /// of its own, and that after_step does nothing when no request finished in the step and
  /// otherwise only releases the finished ones (SchedulerView::release), reading no other
  /// running request but its done(). The engine may then run such steps without calling
  /// plan_step, and call after_step while the other running requests' counts lag behind (they
  /// are not done). 0 (the default): no such promise.
  [[nodiscard]] virtual int64_t repeat_decode_limit() const { return 0; }
  /// With repeat_decode_limit(): whether a step planned now, its running requests' decodes
  /// already given their KV, would admit or resume nothing from the queue. By default only when
  /// nothing waits. Its answer may change only with the queue, running() or the KV manager's
  /// state: the engine asks once for a run of steps that change none of them.
  [[nodiscard]] virtual bool admits_nothing(SchedulerView& s) const { return s.waiting().empty(); }
  /// With repeat_decode_limit(): true promises that admits_nothing() reads the KV manager only
  /// through cached_prefix_tokens() and can_admit(), so that where those refuse no more as the
  /// running requests take blocks (the paged manager, which the engine's streaks need), a true
  /// answer stays true until the queue or running() changes: the engine then asks once for a
  /// run of steps that take blocks and change neither. False (the default): no such promise.
  [[nodiscard]] virtual bool admits_nothing_as_kv_fills() const { return false; }
  /// With repeat_decode_limit(), when admits_nothing() is false: plans into the empty plan what
  /// plan_step would plan after the running requests' decodes (`decodes` of them, every running
  /// request, already given their KV; the engine plans them itself), reading no running
  /// request, and returns true; the engine's decode streak then goes on through the step. False
  /// (changing nothing): the policy does not, and the engine plans the step with plan_step.
  [[nodiscard]] virtual bool plan_admissions(SchedulerView& /*s*/, int64_t /*decodes*/) {
    return false;
  }
  /// With repeat_decode_limit(): true promises that when every running request is decoding but
  /// the KV manager has no room for some one's next token, plan_step gives them their room in
  /// running() order and, at each that finds none, preempts by recompute
  /// (SchedulerView::preempt) the newest running request, running().back(), until the asker's
  /// token fits or the asker itself is gone (its pass then ends), plans exactly the decodes of
  /// those still running, admits nothing and changes nothing else. The engine may then plan
  /// such a step itself. False (the default): no such promise.
  [[nodiscard]] virtual bool preempts_newest() const { return false; }
};

/// What a scheduler may know of its replica's accelerator, as the engine reads it at start-up:
/// vLLM's batch defaults depend on it (schedulers/vllm_defaults.h). The sim layer fills it from
/// the replica's hardware (`step_time.hardware`, else `kv.memory`); this layer cannot see the
/// catalogue.
struct AcceleratorInfo {
  double memory_gib = 0;  ///< one accelerator's total memory, GiB; 0: not known
  std::string name;       ///< its catalogue name ("a100-80gb", "h100-sxm"); empty: not known
};

/// The one way to build a scheduler (schedulers/registry.cpp): reads `scheduler.kind` and
/// builds that policy from the rest of the section, for a replica on `accelerator` (unknown by
/// default). Each policy's own factory is declared in schedulers/factories.h, for the registry
/// only.
[[nodiscard]] std::unique_ptr<Scheduler> make_scheduler(const Cfg& scheduler,
                                                        const AcceleratorInfo& accelerator = {});
[[nodiscard]] std::vector<std::string> scheduler_names();

}  // namespace servesim
