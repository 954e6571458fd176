#include "schedulers/request_level.h"

#include <stdexcept>

namespace servesim {

void RequestLevelScheduler::plan_step(SchedulerView& s) {
  auto& plan = s.plan();
  if (!s.running().empty()) {  // the batch goes on: one decode step for every seat
    for (uint32_t slot : s.running()) {
      Request& r = s.req(slot);
      if (r.done()) {
        plan.push_back({slot, EntryKind::Padding, 0});
        continue;
      }
      // Cannot fail: admission made sure the whole footprint of every member fits.
      if (!s.kv().grow(r, r.context_tokens + 1))
        throw std::logic_error("request-level batch ran out of KV memory");
      plan.push_back({slot, EntryKind::Decode, 0});
    }
    return;
  }
  if (s.waiting().empty() || !should_dispatch(s)) return;

  int64_t room = s.kv().free_tokens();
  while (!s.waiting().empty() && static_cast<int64_t>(s.running().size()) < m_max_batch) {
    const uint32_t slot = s.waiting().front();
    Request& r = s.req(slot);
    const int64_t footprint = s.kv().footprint_tokens(r);
    if (footprint > room) break;
    const int64_t cached = s.kv().cached_prefix_tokens(r);  // a prefix-cache hit is skipped
    if (!s.kv().try_admit(r, cached, r.prefill_target)) break;
    room -= footprint;
    s.admit_front(cached);
    plan.push_back({slot, EntryKind::Prefill, static_cast<int32_t>(r.prefill_target - cached)});
  }
}

void RequestLevelScheduler::after_step(SchedulerView& s) {
  for (uint32_t slot : s.running())
    if (!s.req(slot).done()) return;
  while (!s.running().empty()) s.release(s.running().back());
}

}  // namespace servesim
