// core/batch_state.h: releasing the requests done in one walk of the batch, from the first of
// them where the engine gives it.
#include "core/batch_state.h"

#include <catch2/catch.hpp>
#include <cstdint>
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

}  // namespace t_core_batch_state_test
