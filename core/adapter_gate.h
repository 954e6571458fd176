#pragma once
// Multi-LoRA's per-step limit (the `lora` section, docs/lora.md): a step may hold requests of
// at most max_loras distinct adapters (vLLM's max_loras, SGLang's max_loras_per_batch). A
// scheduler asks SchedulerView::adapter_fits before each admission; a request whose adapter
// would be one too many is passed over for this step and keeps its place in the queue (vLLM
// V1's skipped_waiting_requests). Allocation-free once sized: the step's adapters are a short
// list (at most max_loras entries) read lazily from the plan being built.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/request.h"

namespace servesim {

struct StepEntry;

class AdapterGate {
 public:
  /// `max_loras` distinct adapters per step; 0: no limit (the gate always says yes).
  void set_limit(int32_t max_loras) {
    m_limit = max_loras;
    m_adapters.reserve(static_cast<size_t>(std::max(max_loras, 0)) + 1);
  }
  [[nodiscard]] int32_t limit() const { return m_limit; }
  /// A new step is being planned: forget the last one's adapters.
  void begin_step() {
    replan();
    m_count_running = false;
    ++m_epoch;
  }
  /// Entries left the plan (a preemption): read it again from its start.
  void replan() {
    m_adapters.clear();
    m_scanned = 0;
    m_running_added = false;
  }
  /// For this step, the running requests' adapters count too, planned or not (SGLang counts
  /// its running batch's adapters while it builds a prefill-only batch).
  void count_running() {
    if (m_count_running) return;
    m_count_running = true;
    m_running_added = false;
  }
  /// Whether the request in `slot` may join the step whose entries so far are `plan`: it uses
  /// the base model, or its adapter is already in the step, or the step holds fewer than the
  /// limit. A refusal is counted once per request and step (skips()).
  template <class Requests, class Plan>
  [[nodiscard]] bool fits(uint32_t slot, const Requests& reqs, const Plan& plan,
                          const std::vector<uint32_t>& running) {
    const uint32_t a = reqs[slot].spec.adapter;
    if (m_limit <= 0 || a == 0) return true;
    if (plan.size() < m_scanned) replan();
    if (m_count_running && !m_running_added) {
      for (uint32_t s : running) add(reqs[s].spec.adapter);
      m_running_added = true;
    }
    for (; m_scanned < plan.size(); ++m_scanned) add(reqs[plan[m_scanned].slot].spec.adapter);
    if (holds(a) || static_cast<int32_t>(m_adapters.size()) < m_limit) return true;
    if (slot >= m_skip_epoch.size()) m_skip_epoch.resize(slot + 1, 0);
    if (m_skip_epoch[slot] != m_epoch) {
      m_skip_epoch[slot] = m_epoch;
      ++m_skips;
    }
    return false;
  }
  /// Requests passed over for a step because its adapters were at the limit, counted once per
  /// request and step.
  [[nodiscard]] int64_t skips() const { return m_skips; }

 private:
  [[nodiscard]] bool holds(uint32_t a) const {
    return std::find(m_adapters.begin(), m_adapters.end(), a) != m_adapters.end();
  }
  void add(uint32_t a) {
    // Running requests planned past the limit (admitted in earlier steps) still count once.
    if (a != 0 && !holds(a)) m_adapters.push_back(a);
  }

  int32_t m_limit = 0;
  std::vector<uint32_t> m_adapters;  // distinct adapters of the plan's first m_scanned entries
  size_t m_scanned = 0;
  bool m_count_running = false;
  bool m_running_added = false;
  uint32_t m_epoch = 1;
  std::vector<uint32_t> m_skip_epoch;  // by slot: the step it was last counted as skipped
  int64_t m_skips = 0;
};

}  // namespace servesim
