#pragma once
// Request-level batching, shared by `static` and `dynamic`: a batch is formed only when the
// engine has no batch, runs one prefill step for all its prompts, then decode steps until its
// longest reply is done. A finished sequence keeps its seat as padding; every reply is released
// when the batch ends. Only when a dispatch happens differs, so subclasses decide that.
//
// Batch formation takes requests from the front of the queue, first come first served, up to
// max_batch_size, while the KV manager has room for each one's whole footprint (so a batch can
// never run out of memory and nothing is preempted).
#include "schedulers/factories.h"  // the policies built over it define theirs
#include "schedulers/scheduler.h"

namespace servesim {

class RequestLevelScheduler : public Scheduler {
 public:
  explicit RequestLevelScheduler(int64_t max_batch_size) : m_max_batch(max_batch_size) {}
  void plan_step(SchedulerView& state) final;
  void after_step(SchedulerView& state) final;

 protected:
  /// REQUIRES: no batch is running and the queue is not empty. May call state.wake_at().
  [[nodiscard]] virtual bool should_dispatch(SchedulerView& state) = 0;
  [[nodiscard]] int64_t max_batch_size() const { return m_max_batch; }
  [[nodiscard]] int64_t max_running() const override { return m_max_batch; }

 private:
  int64_t m_max_batch;
};

}  // namespace servesim
