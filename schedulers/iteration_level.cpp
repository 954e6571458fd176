#include "schedulers/iteration_level.h"

namespace servesim {

void release_finished(SchedulerView& s) {
  // Every request done is one that finished in this step (the step before released the
  // others): the walk stops at the last of them.
  int32_t left = s.finished_this_step();
  const std::vector<uint32_t>& running = s.running();
  size_t i = 0;
  while (left > 0) {
    // The scan to the next one done calls nothing, so the batch's and the slots' addresses
    // stay in registers through it.
    while (i < running.size() && !s.req(running[i]).done()) ++i;
    if (i == running.size()) break;
    s.release(running[i]);  // removes it from running(); the next one moves to index i
    --left;
  }
}

int64_t planned_tokens(const SchedulerView& s) {
  int64_t used = 0;
  for (const StepEntry& e : s.plan()) used += e.tokens();
  return used;
}

}  // namespace servesim
