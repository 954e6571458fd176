#pragma once
// steps.csv (servesim run --steps): one row per step, in the order steps start.
#include <fmt/format.h>

#include <ostream>

#include "sim/step_observer.h"

namespace servesim {

/// Columns: replica, start_s, duration_s, sequences, prefill_sequences, prefill_tokens,
/// decode_tokens, kv_used_tokens, kv_capacity_tokens, waiting, running, preemptions, bound
/// (bandwidth | compute | empty when the step-time model reports no cost), bytes, flops (per
/// accelerator, from the model's cost; empty when `bound` is). Times in seconds with nanosecond
/// digits. Formats into a reused buffer: no allocation per step.
class StepsCsvWriter final : public StepObserver {
 public:
  /// Writes the header. REQUIRES: `out` outlives this writer.
  explicit StepsCsvWriter(std::ostream& out);
  void on_step(const StepRecord& s) override;
  /// Writes what is buffered and flushes.
  void finish();

 private:
  std::ostream& m_out;
  fmt::memory_buffer m_buf;
};

}  // namespace servesim
