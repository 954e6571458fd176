// dynamic (Triton's dynamic batcher): request-level batching that dispatches as soon as the
// engine is free and either max_batch_size requests are queued or the oldest queued request has
// waited max_queue_delay_ms (or no further request will arrive).
#include "schedulers/request_level.h"

namespace servesim {
namespace {

class DynamicScheduler final : public RequestLevelScheduler {
 public:
  DynamicScheduler(int64_t max_batch, Time max_delay)
      : RequestLevelScheduler(max_batch), m_max_delay(max_delay) {}

 protected:
  bool should_dispatch(SchedulerView& s) override {
    if (static_cast<int64_t>(s.waiting().size()) >= max_batch_size() || s.arrivals_done())
      return true;
    const Time deadline = s.req(s.waiting().front()).spec.arrival + m_max_delay;
    if (s.now() >= deadline) return true;
    s.wake_at(deadline);
    return false;
  }

 private:
  Time m_max_delay;
};

}  // namespace

std::unique_ptr<Scheduler> make_dynamic(const Cfg& c) {
  const int64_t max_batch = c.get_int("max_batch_size", {1, 1 << 20});
  const double delay_ms = c.get_real("max_queue_delay_ms", {0.0, 1e9, false});
  return std::make_unique<DynamicScheduler>(max_batch, Time::from_ms(delay_ms));
}

}  // namespace servesim
