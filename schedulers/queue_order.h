#pragma once
// Waiting-queue ordering policies shared by the iteration-level schedulers (docs/schedulers.md#
// ordering-policies): which waiting request is tried next, and which running request a
// preemption takes.
//
//   fcfs      arrival order (the engine's default queue; preempted requests back at the front);
//   priority  (RequestSpec::priority, arrival, id), lowest first (vLLM's meaning);
//   sjf       (predicted output tokens, arrival, id): shortest job first on a prediction, the
//             true output length (oracle) or the true length times a lognormal factor
//             exp(sigma * z), z a standard normal drawn from (seed, request id) alone;
//   edf       (arrival + RequestSpec::ttft_slo, arrival, id): earliest TTFT deadline first,
//             requests without a target after every one with a target, in arrival order;
//   fair      the virtual token counter of Sheng et al., "Fairness in Serving Large Language
//             Models" (OSDI 2024): a counter per tenant of the tokens it was served
//             (prompt_weight x prefill tokens + output_weight x output tokens), the waiting
//             request of the backlogged tenant with the least counter next (its oldest one).
// The static orders (priority, sjf, edf) are a key per request (queue_key) that the engine keeps
// the queue sorted by; fair is decided at each admission (FairShare::pick).
#include <cstdint>
#include <string>
#include <vector>

#include "core/batch_state.h"
#include "core/config.h"

namespace servesim {

enum class QueuePolicy : uint8_t { Fcfs, Priority, Sjf, Edf, Fair };

struct QueueOrder {
  QueuePolicy policy = QueuePolicy::Fcfs;
  bool sjf_oracle = true;         ///< sjf.predictor: oracle (else lognormal)
  double sjf_sigma = 0;           ///< sjf.sigma: the lognormal error's sigma
  uint64_t sjf_seed = 1;          ///< sjf.seed
  double fair_prompt_weight = 1;  ///< fair.prompt_weight: counter per prefill token
  double fair_output_weight = 2;  ///< fair.output_weight: counter per output token

  /// Whether the queue is kept sorted by queue_key (priority, sjf, edf).
  [[nodiscard]] bool keyed() const {
    return policy == QueuePolicy::Priority || policy == QueuePolicy::Sjf ||
           policy == QueuePolicy::Edf;
  }
  /// The request's key in the waiting queue, lowest first (Scheduler::queue_key).
  [[nodiscard]] int64_t key(const Request& r) const;
  /// sjf's predicted output tokens of a request (>= 1).
  [[nodiscard]] int64_t predicted_output_tokens(const RequestSpec& spec) const;
};

/// The names of the policies, in QueuePolicy's order.
[[nodiscard]] const std::vector<std::string>& queue_policy_names();

/// Reads `key` (one of `allowed`, a subset of queue_policy_names(), default fcfs) and the maps
/// `sjf` and `fair` (read whatever the policy; each used by its own).
[[nodiscard]] QueueOrder read_queue_order(const Cfg& scheduler, const std::string& key,
                                          const std::vector<std::string>& allowed);

/// The index in running() of the request a preemption takes: the newest admission (fcfs,
/// fair), or the highest (order_key, arrival, id): the least urgent (priority, sjf, edf).
[[nodiscard]] size_t preemption_victim(const QueueOrder& order, const SchedulerView& s);

/// fair's state: one virtual token counter per tenant. Per step: begin_step() once, then
/// charge() every planned entry and pick() before each admission. Allocation-free once every
/// tenant has been seen.
class FairShare {
 public:
  explicit FairShare(const QueueOrder& order)
      : m_prompt_weight(order.fair_prompt_weight), m_output_weight(order.fair_output_weight) {}
  /// Marks which tenants are backlogged (have a waiting request). A tenant newly backlogged
  /// has its counter lifted to the least counter of the tenants backlogged before and still
  /// (VTC's rule, so that an idle tenant cannot bank service).
  void begin_step(const SchedulerView& s);
  /// The index in waiting() of the next request: the first one whose tenant has the least
  /// counter. REQUIRES: waiting() is not empty.
  [[nodiscard]] size_t pick(const SchedulerView& s) const;
  /// Adds a planned entry's service to its tenant's counter: prompt_weight per prefill token,
  /// output_weight per output token (a decode, or the chunk that ends a prefill).
  void charge(const SchedulerView& s, const StepEntry& e);
  [[nodiscard]] double counter(uint16_t tenant) const {
    return tenant < m_counter.size() ? m_counter[tenant] : 0.0;
  }

 private:
  void grow(uint16_t tenant);

  double m_prompt_weight;
  double m_output_weight;
  std::vector<double> m_counter;       // by tenant id
  std::vector<uint8_t> m_backlogged;   // at the previous begin_step
  std::vector<uint8_t> m_waiting_now;  // scratch
};

}  // namespace servesim
