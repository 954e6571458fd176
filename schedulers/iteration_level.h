#pragma once
// Helpers shared by the iteration-level policies (continuous and its orca / sarathi aliases,
// vllm), which re-form the batch before every step and release a reply as soon as its last
// token is produced.
#include <cstdint>
#include <limits>
#include <memory>

#include "schedulers/scheduler.h"

namespace servesim {

/// No limit on the tokens of a step.
inline constexpr int64_t k_unlimited_tokens = std::numeric_limits<int64_t>::max();

/// Releases every running request that has produced its last token, keeping the others' order.
void release_finished(BatchState& s);

/// Tokens computed by the step being planned: a prefill entry its chunk, any other entry 1.
[[nodiscard]] int64_t planned_tokens(const BatchState& s);

/// The settings of the continuous policy (continuous.cpp), which orca and sarathi name.
struct ContinuousSettings {
  int64_t max_num_seqs = 1;
  int64_t max_num_batched_tokens = k_unlimited_tokens;  ///< the token budget of a step
  bool chunked_prefill = false;
};
[[nodiscard]] std::unique_ptr<Scheduler> make_continuous_scheduler(const ContinuousSettings& s);

}  // namespace servesim
