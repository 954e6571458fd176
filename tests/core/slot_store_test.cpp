// core/slot_store.h and BatchState's request slots: elements keep their addresses and values
// while the store grows block after block and when it is moved; iteration visits every slot in
// index order; every element constructed is destroyed once.
#include "core/slot_store.h"

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/batch_state.h"
#include "core/kv/kv_manager.h"
#include "tests/support.h"

namespace t_core_slot_store_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Counts its live instances, and holds a string long enough to live on the heap (a moved or
/// copied element would show as a changed address or a second construction).
struct Counted {
  static inline int64_t live = 0;
  Counted() { ++live; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  ~Counted() { --live; }
  int64_t value = -1;
  std::string text;
};

}  // namespace

TEST_CASE("slot store: elements stay where they are as blocks are added", "[core]") {
  Counted::live = 0;
  {
    SlotStore<Counted, 3> s;  // 8 slots a block
    std::vector<const Counted*> at;
    for (int64_t i = 0; i < 1000; ++i) {
      Counted& c = s.emplace_back();
      CHECK(c.value == -1);  // default-constructed
      c.value = i;
      c.text = "element number " + std::to_string(i) + " with a heap buffer";
      at.push_back(&c);
      // The first element, and the last of the previous block, never move.
      CHECK(&s[0] == at[0]);
      if (i >= 8)
        CHECK(&s[static_cast<size_t>(i / 8 * 8 - 1)] == at[static_cast<size_t>(i / 8 * 8 - 1)]);
    }
    REQUIRE(s.size() == 1000);
    CHECK(s.blocks() == 125);
    CHECK(Counted::live == 1000);
    for (size_t i = 0; i < s.size(); ++i) {
      CHECK(&s[i] == at[i]);
      CHECK(s[i].value == static_cast<int64_t>(i));
    }
    // Range-for and a const store's iteration: every slot, in index order.
    int64_t next = 0;
    for (Counted& c : s) CHECK((c.value == next++ && &c == at[static_cast<size_t>(c.value)]));
    CHECK(next == 1000);
    const auto& cs = s;
    next = 0;
    for (const Counted& c : cs) CHECK(c.value == next++);
    CHECK(next == 1000);

    // A move hands the blocks over: the same addresses, nothing constructed or destroyed.
    SlotStore<Counted, 3> moved(std::move(s));
    CHECK(s.size() == 0);  // NOLINT(bugprone-use-after-move): a moved-from store is empty
    CHECK(s.begin() == s.end());
    REQUIRE(moved.size() == 1000);
    CHECK(Counted::live == 1000);
    for (size_t i = 0; i < moved.size(); ++i) CHECK(&moved[i] == at[i]);
    SlotStore<Counted, 3> assigned;
    assigned.emplace_back();
    CHECK(Counted::live == 1001);
    assigned = std::move(moved);  // the element it held is destroyed
    CHECK(Counted::live == 1000);
    CHECK(&assigned[999] == at[999]);
    CHECK(assigned[999].text == "element number 999 with a heap buffer");
  }
  CHECK(Counted::live == 0);  // each destroyed once
}

TEST_CASE("slot store: a batch state's requests keep their addresses as requests arrive",
          "[core]") {
  auto doc = doc_of("policy: reserve\ncapacity_tokens: 4096\nblock_size: 16\n");
  BatchState state(make_kv_manager(Cfg::root(doc), nullptr));
  doc->check_all_read();
  std::vector<const Request*> at;
  // Past a few blocks of 256 slots, with some slots recycled and taken again on the way.
  for (uint64_t id = 0; id < 2000; ++id) {
    RequestSpec spec;
    spec.id = id;
    spec.prompt_tokens = 10;
    spec.output_tokens = 5;
    const uint32_t slot = state.add_request(spec);
    if (slot == at.size()) at.push_back(&state.req(slot));
    CHECK(&state.req(slot) == at[slot]);
    CHECK(state.req(slot).spec.id == id);
    if (id % 3 == 2) {  // every third request leaves at once; its slot is taken by the next
      state.reject(slot, "test");
      state.recycle(slot);
    }
  }
  REQUIRE(state.slots().size() == at.size());
  CHECK(at.size() == 2000 - 2000 / 3);
  for (uint32_t slot = 0; slot < at.size(); ++slot) CHECK(&state.slots()[slot] == at[slot]);
  CHECK(state.live() == at.size());  // the last slot recycled was taken again
}

}  // namespace t_core_slot_store_test
