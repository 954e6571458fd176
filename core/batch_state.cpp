#include "core/batch_state.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <new>
#include <string>
#include <utility>

namespace servesim {
namespace {

/// The capacity of an empty std::string: what it holds without a heap buffer.
const size_t k_short_string = std::string().capacity();  // not constexpr: clang refuses it

}  // namespace

SchedulerView::SchedulerView(std::unique_ptr<KvManager> kv) : m_kv(std::move(kv)) {
  m_running.reserve(1024);
  m_plan.reserve(1024);
  m_departed.reserve(1024);
}

uint32_t BatchState::new_slot() {
  const auto slot = static_cast<uint32_t>(m_requests.size());
  m_requests.emplace_back();
  m_swapped.push_back(0);
  return slot;
}

void BatchState::recycle(uint32_t slot) {
  Request& r = m_requests[slot];
  // A fresh request in place, member by member: the vectors and the reason keep their heap
  // buffers (cleared) for the next request. Destroying the request and building a new one in
  // its place, the buffers moved out and back, cost about 130 instructions a request.
  static_assert(sizeof(Request) == 368 && sizeof(RequestSpec) == 160,
                "a member added to Request or RequestSpec: reset it here");
  RequestSpec& s = r.spec;
  s.id = 0;
  s.arrival = Time();
  s.prompt_tokens = 0;
  s.output_tokens = 0;
  s.block_hashes.clear();
  s.hash_block_tokens = 0;
  s.content_stream = 0;
  s.session = 0;
  s.max_output_tokens = 0;
  s.api_in = Time();
  s.api_out = Time();
  s.class_id = 0;
  s.priority = 0;
  s.tenant_id = 0;
  s.adapter = 0;
  s.adapter_given = false;
  s.ttft_slo = Time();
  s.cancel_after_tokens = 0;
  s.timeout = Time();
  s.cancel_after = Time();
  s.retries = 0;
  r.state = RequestState::Pending;
  r.context_tokens = 0;
  r.prefill_target = 0;
  r.generated_tokens = 0;
  r.kv_held_tokens = 0;
  r.preemptions = 0;
  r.swap_preemptions = 0;
  r.replica = 0;
  r.prefill_replica = k_no_replica;
  r.prefill_preemptions = 0;
  r.prefill_swap_preemptions = 0;
  r.admission_seq = 0;
  r.order_key = 0;
  r.kv_blocks.clear();
  r.kv_block_keys.clear();
  r.kv_keyed_blocks = 0;
  r.cached_prompt_tokens = 0;
  r.first_admitted = Time::max();
  r.first_token = Time::max();
  r.last_token = Time::max();
  r.finish = Time::max();
  r.release = Time::max();
  r.reject_reason.clear();
  r.end_cause = EndCause::None;
  r.client_view = false;
  m_swapped[slot] = 0;
  m_free.push_back(slot);
}

void SchedulerView::put_waiting(uint32_t slot, bool front) {
  if (!m_priority_order) {
    if (front)
      m_waiting.push_front(slot);
    else
      m_waiting.push_back(slot);
    return;
  }
  // (order_key, arrival, id) is unique (ids are), so the place is exact. A new arrival with the
  // common key goes to the back, where the search ends at once.
  const auto before = [this](uint32_t a, uint32_t b) {
    const Request& ra = m_requests[a];
    const Request& rb = m_requests[b];
    if (ra.order_key != rb.order_key) return ra.order_key < rb.order_key;
    const RequestSpec& x = ra.spec;
    const RequestSpec& y = rb.spec;
    return x.arrival != y.arrival ? x.arrival < y.arrival : x.id < y.id;
  };
  if (m_waiting.empty() || !before(slot, m_waiting.back())) {
    m_waiting.push_back(slot);
    return;
  }
  m_waiting.insert(std::upper_bound(m_waiting.begin(), m_waiting.end(), slot, before), slot);
}

void BatchState::reject(uint32_t slot, std::string reason) {
  Request& r = m_requests[slot];
  r.state = RequestState::Rejected;
  r.reject_reason = std::move(reason);
  r.release = m_now;
}

void BatchState::abandon(uint32_t slot, EndCause cause, std::string reason) {
  Request& r = m_requests[slot];
  assert(!m_swapped[slot]);
  if (r.state == RequestState::Queued) {
    m_waiting.erase(std::find(m_waiting.begin(), m_waiting.end(), slot));
  } else {
    assert(r.state == RequestState::Running);
    m_kv->release(r);
    m_running.erase(std::find(m_running.begin(), m_running.end(), slot));
    std::erase_if(m_plan, [slot](const StepEntry& e) { return e.slot == slot; });
    m_decode_run = DecodeRun{};
  }
  r.state = RequestState::Abandoned;
  r.end_cause = cause;
  r.reject_reason = std::move(reason);
  r.release = m_now;
}

bool SchedulerView::adapter_fits_limited(uint32_t slot) {
  return m_adapters.fits(slot, m_requests, m_plan, m_running);
}

uint32_t SchedulerView::take_waiting(size_t index) {
  assert(index < m_waiting.size());
  // Mostly the front (first come first served): pop_front, without the general erase's
  // iterator arithmetic and its choice of which end to shift (about 180 instructions).
  if (index == 0) {
    const uint32_t slot = m_waiting.front();
    m_waiting.pop_front();
    return slot;
  }
  const auto at = m_waiting.begin() + static_cast<std::ptrdiff_t>(index);
  const uint32_t slot = *at;
  m_waiting.erase(at);
  return slot;
}

void SchedulerView::admit_front(int64_t cached_tokens) { admit_at(0, cached_tokens); }

void SchedulerView::admit_at(size_t index, int64_t cached_tokens) {
  const uint32_t slot = take_waiting(index);
  assert(!m_swapped[slot]);
  Request& r = m_requests[slot];
  r.state = RequestState::Running;
  r.admission_seq = ++m_admissions;
  r.context_tokens = static_cast<int32_t>(cached_tokens);
  r.cached_prompt_tokens += cached_tokens;
  if (r.first_admitted == Time::max()) r.first_admitted = m_now;
  m_running.push_back(slot);
}

void SchedulerView::preempt(uint32_t slot) {
  Request& r = m_requests[slot];
  assert(r.state == RequestState::Running);
  m_kv->release(r);
  r.state = RequestState::Queued;
  r.context_tokens = 0;
  r.prefill_target = r.spec.prompt_tokens + r.generated_tokens;
  ++r.preemptions;
  ++m_preemptions;
  m_running.erase(std::find(m_running.begin(), m_running.end(), slot));
  std::erase_if(m_plan, [slot](const StepEntry& e) { return e.slot == slot; });
  m_decode_run = DecodeRun{};
  m_adapters.replan();
  put_waiting(slot, true);
}

void SchedulerView::preempt_swap(uint32_t slot) {
  Request& r = m_requests[slot];
  assert(r.state == RequestState::Running);
  m_kv->release(r);
  r.state = RequestState::Queued;
  ++r.preemptions;
  ++r.swap_preemptions;
  ++m_preemptions;
  ++m_swap_preemptions;
  m_swapped[slot] = 1;
  m_running.erase(std::find(m_running.begin(), m_running.end(), slot));
  std::erase_if(m_plan, [slot](const StepEntry& e) { return e.slot == slot; });
  m_decode_run = DecodeRun{};
  m_adapters.replan();
  put_waiting(slot, true);
}

void SchedulerView::swap_in_at(size_t index) {
  const uint32_t slot = take_waiting(index);
  assert(m_swapped[slot]);
  m_swapped[slot] = 0;
  Request& r = m_requests[slot];
  r.state = RequestState::Running;
  r.admission_seq = ++m_admissions;
  m_running.push_back(slot);
}

[[gnu::always_inline]] inline void SchedulerView::leave(uint32_t slot) {
  Request& r = m_requests[slot];
  assert(r.state == RequestState::Finished);
  if (!m_hold_kv_on_release) m_kv->release(r);
  r.state = RequestState::Released;
  r.release = m_now;
  m_departed.push_back(slot);
}

void SchedulerView::release(uint32_t slot) {
  leave(slot);
  m_running.erase(std::find(m_running.begin(), m_running.end(), slot));
}

void SchedulerView::release_done(int32_t count) {
  if (count <= 0) return;
  uint32_t* const run = m_running.data();
  const size_t n = m_running.size();
  size_t i = 0;
  const uint32_t first = std::exchange(m_first_finished, UINT32_MAX);
  if (first != UINT32_MAX && n >= k_search_batch) {
    // The first done in running() is the earliest admitted of the step's finished: running()
    // is in admission order (each admission appends with the next admission_seq, and a leave,
    // a preemption or an abandonment keeps the others' order), so a binary search finds it.
    // Where it is not there, the walk from the start.
    const uint32_t seq = m_requests[first].admission_seq;
    for (size_t len = n; len > 0;) {
      const size_t half = len / 2;
      if (m_requests[run[i + half]].admission_seq < seq) {
        i += half + 1;
        len -= half + 1;
      } else {
        len = half;
      }
    }
    if (i == n || run[i] != first) i = 0;
  }
  // The scan to the first one done calls nothing, so the batch's and the slots' addresses stay
  // in registers through it.
  while (i < n && !m_requests[run[i]].done()) ++i;
  if (i == n) return;
  // From there one pass: each one done leaves, the others move down over the gaps, and once
  // `count` have left the rest moves down at once (release()'s find and erase per request
  // walked the batch again for each).
  size_t out = i;
  for (;;) {
    leave(run[i++]);
    if (--count == 0) break;
    while (i < n && !m_requests[run[i]].done()) run[out++] = run[i++];
    if (i == n) break;
  }
  std::copy(run + i, run + n, run + out);
  m_running.resize(out + (n - i));
}

void SchedulerView::wake_at(Time t) { m_wake = std::min(m_wake, t); }

void BatchState::admit_prefilled(uint32_t slot) {
  Request& r = m_requests[slot];
  r.state = RequestState::Running;
  r.admission_seq = ++m_admissions;
  m_running.push_back(slot);
}

}  // namespace servesim
