#include "schedulers/iteration_level.h"

namespace servesim {

void release_finished(SchedulerView& s) {
  // Every request done is one that finished in this step (the step before released the
  // others): one walk of the batch, to the last of them.
  s.release_done(s.finished_this_step());
}

int64_t planned_tokens(const SchedulerView& s) {
  int64_t used = 0;
  for (const StepEntry& e : s.plan()) used += e.tokens();
  return used;
}

}  // namespace servesim
