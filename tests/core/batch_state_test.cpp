// core/batch_state.h: releasing the requests done in one walk of the batch, from the first of
// them where the engine gives it; a recycled slot's request as a fresh one, its buffers kept.
#include "core/batch_state.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "core/kv/kv_manager.h"
#include "tests/support.h"

namespace t_core_batch_state_test {

using namespace servesim;
using namespace servesim::test;

// A state with paged KV (blocks of 16) and `n` requests of 20-token prompts running in slot
// order, each holding 2 blocks.
BatchState running_state(int n) {
  auto doc = doc_of("policy: paged\ncapacity_tokens: 4096\nblock_size: 16\n");
  BatchState state(make_kv_manager(Cfg::root(doc), nullptr));
  doc->check_all_read();
  for (int i = 0; i < n; ++i) {
    RequestSpec spec;
    spec.id = static_cast<uint64_t>(i);
    spec.prompt_tokens = 20;
    spec.output_tokens = 4;
    const uint32_t slot = state.add_request(spec);
    state.enqueue(slot);
    REQUIRE(state.kv().try_admit(state.req(slot), 0, 20));
    state.admit_front();
  }
  return state;
}

void finish(BatchState& state, uint32_t slot) {
  Request& r = state.req(slot);
  r.context_tokens = r.prefill_target + r.spec.output_tokens - 1;
  r.generated_tokens = r.spec.output_tokens;
  r.state = RequestState::Finished;
}

TEST_CASE("batch state: release_done releases those done in batch order, the others keep theirs",
          "[core]") {
  BatchState state = running_state(8);
  state.set_now(Time::ns(77));
  CHECK(state.kv().used_tokens() == 8 * 32);
  for (uint32_t slot : {1u, 4u, 5u, 7u}) finish(state, slot);
  // Three of the four: the first three in running() order leave, in that order.
  state.release_done(3);
  CHECK(state.departed() == std::vector<uint32_t>{1, 4, 5});
  CHECK(state.running() == std::vector<uint32_t>{0, 2, 3, 6, 7});
  CHECK(state.kv().used_tokens() == 5 * 32);
  for (uint32_t slot : {1u, 4u, 5u}) {
    CHECK(state.req(slot).state == RequestState::Released);
    CHECK(state.req(slot).release == Time::ns(77));
    CHECK(state.req(slot).kv_held_tokens == 0);
  }
  CHECK(state.req(7).state == RequestState::Finished);
  // Asked for more than are done: the one left leaves, the batch's last.
  state.release_done(5);
  CHECK(state.departed() == std::vector<uint32_t>{1, 4, 5, 7});
  CHECK(state.running() == std::vector<uint32_t>{0, 2, 3, 6});
  // None asked, or none done: nothing moves.
  finish(state, 0);
  state.release_done(0);
  CHECK(state.running().size() == 4);
  state.release_done(1);  // the batch's first
  CHECK(state.running() == std::vector<uint32_t>{2, 3, 6});
  state.release_done(2);
  CHECK(state.running() == std::vector<uint32_t>{2, 3, 6});
  CHECK(state.departed() == std::vector<uint32_t>{1, 4, 5, 7, 0});
}

TEST_CASE("batch state: release_done starts at the first finished the engine gives, by admission",
          "[core]") {
  // 40 running (a batch large enough to be searched), then 3 and 10 preempted and admitted
  // again (10 first, from the queue's front): running() is no longer in slot order.
  BatchState state = running_state(40);
  state.preempt(3);
  state.preempt(10);
  for (int i = 0; i < 2; ++i) {
    REQUIRE(state.kv().try_admit(state.req(state.waiting().front()), 0, 20));
    state.admit_front();
  }
  REQUIRE(state.running().size() == 40);
  REQUIRE(state.running()[37] == 39);
  REQUIRE(state.running()[38] == 10);
  REQUIRE(state.running()[39] == 3);
  std::vector<uint32_t> expected = state.running();
  const auto without = [&expected](uint32_t slot) { std::erase(expected, slot); };
  // Four finished; the earliest admitted of them (5) given: they leave in running() order.
  for (uint32_t slot : {3u, 10u, 20u, 5u}) finish(state, slot);
  state.set_finished_this_step(4, 5);
  state.release_done(4);
  CHECK(state.departed() == std::vector<uint32_t>{5, 20, 10, 3});
  for (uint32_t slot : {3u, 10u, 20u, 5u}) without(slot);
  CHECK(state.running() == expected);
  // One finished, the batch's last but one; then the batch's first.
  finish(state, 38);
  state.set_finished_this_step(1, 38);
  state.release_done(1);
  without(38);
  CHECK(state.running() == expected);
  finish(state, 0);
  state.set_finished_this_step(1, 0);
  state.release_done(1);
  without(0);
  CHECK(state.running() == expected);
  // A slot given that is not running (released above): the walk from the start finds them.
  finish(state, 1);
  finish(state, 30);
  state.set_finished_this_step(2, 20);
  state.release_done(2);
  without(1);
  without(30);
  CHECK(state.running() == expected);
  CHECK(state.departed() == std::vector<uint32_t>{5, 20, 10, 3, 38, 0, 1, 30});
}

// Every member of `r`, as text: two requests with the same text are the same request.
std::string request_text(const Request& r) {
  const RequestSpec& s = r.spec;
  std::string t;
  for (const int64_t v : {int64_t(s.id),
                          s.arrival.count_ns(),
                          int64_t{s.prompt_tokens},
                          int64_t{s.output_tokens},
                          int64_t(s.block_hashes.size()),
                          int64_t{s.hash_block_tokens},
                          int64_t(s.content_stream),
                          int64_t(s.session),
                          int64_t{s.max_output_tokens},
                          s.api_in.count_ns(),
                          s.api_out.count_ns(),
                          int64_t{s.class_id},
                          int64_t{s.priority},
                          int64_t{s.tenant_id},
                          int64_t{s.adapter},
                          int64_t{s.adapter_given},
                          s.ttft_slo.count_ns(),
                          int64_t{s.cancel_after_tokens},
                          s.timeout.count_ns(),
                          s.cancel_after.count_ns(),
                          int64_t{s.retries},
                          int64_t(r.state),
                          int64_t{r.context_tokens},
                          int64_t{r.prefill_target},
                          int64_t{r.generated_tokens},
                          r.kv_held_tokens,
                          int64_t{r.preemptions},
                          int64_t{r.swap_preemptions},
                          int64_t{r.replica},
                          int64_t{r.prefill_replica},
                          int64_t{r.prefill_preemptions},
                          int64_t{r.prefill_swap_preemptions},
                          int64_t{r.admission_seq},
                          r.order_key,
                          int64_t(r.kv_blocks.size()),
                          int64_t(r.kv_block_keys.size()),
                          int64_t{r.kv_keyed_blocks},
                          r.cached_prompt_tokens,
                          r.first_admitted.count_ns(),
                          r.first_token.count_ns(),
                          r.last_token.count_ns(),
                          r.finish.count_ns(),
                          r.release.count_ns(),
                          int64_t(r.end_cause),
                          int64_t{r.client_view}})
    t += std::to_string(v) + ",";
  return t + r.reject_reason;
}

TEST_CASE("batch state: a recycled slot holds a fresh request, its buffers kept for the next",
          "[core]") {
  BatchState state = running_state(1);
  Request& r = state.req(0);
  // Every member away from a fresh request's value (recycle resets them one by one).
  RequestSpec& s = r.spec;
  s.id = 7, s.arrival = Time::ns(5), s.prompt_tokens = 3, s.output_tokens = 2;
  s.block_hashes.assign(40, 9), s.hash_block_tokens = 16, s.content_stream = 4, s.session = 6;
  s.max_output_tokens = 8, s.api_in = Time::ns(1), s.api_out = Time::ns(2), s.class_id = 3;
  s.priority = -1, s.tenant_id = 2, s.adapter = 5, s.adapter_given = true;
  s.ttft_slo = Time::ns(9), s.cancel_after_tokens = 4, s.timeout = Time::ns(11);
  s.cancel_after = Time::ns(12), s.retries = 1;
  r.state = RequestState::Rejected, r.context_tokens = 9, r.prefill_target = 10;
  r.generated_tokens = 2, r.kv_held_tokens = 32, r.preemptions = 3, r.swap_preemptions = 1;
  r.replica = 2, r.prefill_replica = 1, r.prefill_preemptions = 1;
  r.prefill_swap_preemptions = 1, r.admission_seq = 4, r.order_key = -3;
  r.kv_blocks.assign(50, 1), r.kv_block_keys.assign(60, 2), r.kv_keyed_blocks = 2;
  r.cached_prompt_tokens = 16, r.first_admitted = Time::ns(1), r.first_token = Time::ns(2);
  r.last_token = Time::ns(3), r.finish = Time::ns(4), r.release = Time::ns(5);
  r.reject_reason = std::string(100, 'x'), r.end_cause = EndCause::Shed, r.client_view = true;
  const Request fresh;
  REQUIRE(request_text(r) != request_text(fresh));
  const auto* hashes = s.block_hashes.data();
  const auto* blocks = r.kv_blocks.data();
  const auto* keys = r.kv_block_keys.data();
  const char* reason = r.reject_reason.data();
  state.recycle(0);
  CHECK(request_text(state.req(0)) == request_text(fresh));
  CHECK(state.live() == 0);
  // Taken again: the same slot, and the buffers are those the last request had.
  RequestSpec next;
  next.prompt_tokens = 12;
  next.block_hashes.assign(3, 1);
  REQUIRE(state.add_request(next) == 0);
  CHECK(state.req(0).spec.block_hashes.data() == hashes);
  CHECK(state.req(0).kv_blocks.data() == blocks);
  CHECK(state.req(0).kv_block_keys.data() == keys);
  CHECK(state.req(0).reject_reason.data() == reason);
  CHECK(state.req(0).prefill_target == 12);
  CHECK(state.req(0).state == RequestState::Pending);
}

}  // namespace t_core_batch_state_test
