#include "schedulers/iteration_level.h"

namespace servesim {

void release_finished(SchedulerView& s) {
  if (s.finished_this_step() == 0) return;
  for (size_t i = 0; i < s.running().size();) {
    const uint32_t slot = s.running()[i];
    if (s.req(slot).done()) {
      s.release(slot);  // removes it from running(); the next one moves to index i
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
