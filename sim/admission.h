#pragma once
// Admission and abandonment (docs/schedulers.md#admission-and-abandonment): what the engine
// refuses at a request's arrival, and when a client gives up on a request it sent.
//
// The `admission` section decides at the replica a request was routed to, after the checks of
// whether it can ever fit (those reject first), in this order:
//   1. rate_limit: a token bucket per tenant (one for the whole workload without tenants),
//      `burst` tokens deep, refilled at `rate_per_s` (a tenant named under rate_limit.tenants
//      has its own rate_per_s and burst); a request finding less than one token is shed
//      (status `shed`), one finding a token takes it;
//   2. queue_cap: a request finding that many requests in its replica's waiting queue is
//      rejected (status `rejected`);
//   3. slo_reject: a request whose estimated TTFT exceeds its target is rejected. The estimate
//      is the replica's step-time model's time for one prefill step of every prefill token ahead
//      of it plus its own: the queued requests' prefill tokens still to compute, the running
//      requests' unfinished prefill tokens and its prompt (StepShape: prefill_tokens their sum,
//      prefill_tokens_sq the sum of each one's square, sequences their count). It leaves out the
//      step in flight and the decodes that would share the steps, so it is optimistic: what it
//      rejects could not have made its target on this model. The target is the request's class
//      ttft_slo_ms (a mix component's), else the `slo` section's ttft_ms; a request with
//      neither is never rejected by it.
// The `abandonment` section:
//   timeout_s: a request still without its first token timeout_s after its arrival at the engine
//      leaves (status `timed_out`): at that instant when it is queued or its replica's step in
//      flight does not include it, else at that step's end (an engine aborts between steps). A
//      mix component's timeout_s replaces it for its class (RequestSpec::timeout);
//   cancel.fraction: that share of requests (drawn per request from the seed and its id) is
//      cancelled once it has a uniformly drawn number of its output tokens, from 1 to all but
//      the last; a trace's cancel_after_tokens column gives the number instead. A cancelled
//      request leaves at the end of the step that produced that token (status `cancelled`).
//      With cancel.after_s (a distribution: fixed, uniform or exponential) the drawn share is
//      cancelled that long after its arrival instead, served or not, as a trace's
//      cancel_after_s column does (RequestSpec::cancel_after): then, like a timeout, at that
//      instant, or at the end of the step in flight that includes it.
// Every such request frees its KV when it leaves and is recorded then.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/batch_state.h"
#include "core/config.h"
#include "core/time.h"
#include "models/step_time_model.h"
#include "sim/slo.h"

namespace servesim {

/// abandonment.cancel.after_s: a time drawn per request from a uniform u in [0, 1).
struct CancelAfterDist {
  enum class Kind : uint8_t { Fixed, Uniform, Exponential } kind = Kind::Fixed;
  double a = 0, b = 0;  ///< fixed: a; uniform: [a, b); exponential: mean a
  [[nodiscard]] double seconds(double u) const;
};

/// A tenant's own token bucket (admission.rate_limit.tenants).
struct TenantRate {
  std::string tenant;
  double rate_per_s = 0;
  double burst = 1;
};

/// The checked `admission` and `abandonment` sections.
struct AdmissionSpec {
  int64_t queue_cap = 0;       ///< > 0: most requests a replica's waiting queue holds; 0: no cap
  double rate_per_s = 0;       ///< > 0: each tenant's token bucket's refill rate; 0: no limit
  double burst = 0;            ///< the bucket's depth (and its tokens at time 0)
  bool slo_reject = false;     ///< reject what cannot meet its TTFT target (see above)
  Time slo_ttft;               ///< the `slo` section's ttft_ms; 0: none
  Time timeout;                ///< > 0: time to first token after which the client leaves
  double cancel_fraction = 0;  ///< share of requests cancelled mid-generation
  std::optional<CancelAfterDist> cancel_after;  ///< cancel.after_s: by time, not by tokens
  std::vector<TenantRate> tenant_rates;         ///< rate_limit.tenants
  [[nodiscard]] bool admits_all() const {
    return queue_cap == 0 && rate_per_s == 0 && tenant_rates.empty() && !slo_reject;
  }
};

/// The `admission` and `abandonment` sections of `root`, or null when both are absent. Throws
/// InputError naming the key for bad input.
[[nodiscard]] std::shared_ptr<const AdmissionSpec> read_admission(
    const Cfg& root, const std::optional<SloTargets>& slo);

/// The run's admission state: the token buckets, the pending timeouts and the cancel draws.
class AdmissionControl {
 public:
  AdmissionControl(std::shared_ptr<const AdmissionSpec> spec, uint64_t seed);
  [[nodiscard]] const AdmissionSpec& spec() const { return *m_spec; }

  /// Sets r.spec.cancel_after_tokens (or, with cancel.after_s, r.spec.cancel_after) from the
  /// cancel draw when the trace gave neither.
  void draw_cancel(Request& r) const;
  /// The run's tenant names as known so far (Simulation::tenant_names), which
  /// rate_limit.tenants is matched against. REQUIRES: `names` outlives this.
  void set_tenant_names(const std::vector<std::string>* names) { m_tenant_names = names; }
  /// Empty when `r` (added to `state`, not queued yet) may join the queue at `now`; otherwise
  /// why not, with `cause` set to Shed (the rate limit) or Refused (queue cap, SLO check).
  [[nodiscard]] std::string refuse(const Request& r, const SchedulerView& state,
                                   const StepTimeModel& model, Time now, EndCause& cause);

  /// A timeout to check at `deadline` for request `id` in `slot` of replica `rep`.
  struct Watch {
    Time deadline;
    uint64_t id = 0;
    uint32_t rep = 0, slot = 0;
    bool cancel = false;  ///< RequestSpec::cancel_after (else a timeout)
  };
  void watch(const Watch& w);
  /// The earliest watch due at `now` or before, removed; false when none is.
  [[nodiscard]] bool pop_due(Time now, Watch& out);

 private:
  struct Bucket {
    double tokens = 0;
    Time at;  ///< when `tokens` was counted
    double rate_per_s = 0, burst = 0;
  };
  /// Tenant t's bucket, made at its first request (full, with its own rate if it has one).
  Bucket& bucket(uint16_t t, Time now);
  std::shared_ptr<const AdmissionSpec> m_spec;
  uint64_t m_seed;
  std::vector<Bucket> m_buckets;  ///< by tenant id; rate_per_s 0: not made yet
  const std::vector<std::string>* m_tenant_names = nullptr;
  std::vector<Watch> m_watches;  ///< a min-heap by (deadline, id)
};

}  // namespace servesim
