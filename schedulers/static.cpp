// static: request-level batching that waits for a full batch. A batch is dispatched when
// max_batch_size requests are queued; a partial batch only once no further request will arrive.
#include "schedulers/request_level.h"

namespace servesim {
namespace {

class StaticScheduler final : public RequestLevelScheduler {
 public:
  using RequestLevelScheduler::RequestLevelScheduler;

 protected:
  bool should_dispatch(SchedulerView& s) override {
    return static_cast<int64_t>(s.waiting().size()) >= max_batch_size() || s.arrivals_done();
  }
};

}  // namespace

std::unique_ptr<Scheduler> make_static(const Cfg& c) {
  return std::make_unique<StaticScheduler>(c.get_int("max_batch_size", {1, 1 << 20}));
}

}  // namespace servesim
