#include "schedulers/iteration_level.h"

namespace servesim {

void release_finished(SchedulerView& s) {
  // Every request done is one that finished in this step (the step before released the
  // others): the walk stops at the last of them.
  int32_t left = s.finished_this_step();
  for (size_t i = 0; left > 0 && i < s.running().size();) {
    const uint32_t slot = s.running()[i];
    if (s.req(slot).done()) {
      s.release(slot);  // removes it from running(); the next one moves to index i
      --left;
    } else {
      ++i;
    }
  }
}

int64_t planned_tokens(const SchedulerView& s) {
  int64_t used = 0;
  for (const StepEntry& e : s.plan()) used += e.tokens();
  return used;
}

}  // namespace servesim
