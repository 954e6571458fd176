// sim/event_queue.h: EventQueue gives events in (time, phase, replica, order posted) order
// whatever the interleaving of posts, pops and reads: checked against a plain sorted reference
// over random runs that post after a pop, pop twice running, read the top between, and post
// ties of time, phase and replica (and events earlier than everything queued, which wait in the
// slot beside the heap).
#include "sim/event_queue.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>

namespace t_sim_event_queue_test {

using namespace servesim;

// (time ns, phase, replica, posting order, kind): the order the queue promises.
using Key = std::tuple<int64_t, uint8_t, uint32_t, uint64_t, EventKind>;

Event make(EventKind k, int64_t t, uint32_t replica) {
  switch (k) {
    case EventKind::StepEnd:
      return Event::step_end(Time::ns(t), replica);
    case EventKind::Arrival:
      return Event::arrival(Time::ns(t));
    case EventKind::Timer:
      return Event::timer(Time::ns(t), replica);
    default:
      return Event::schedule(Time::ns(t), replica);
  }
}

TEST_CASE("event queue: random posts, pops and reads come out in the promised order", "[sim]") {
  const EventKind kinds[] = {EventKind::StepEnd, EventKind::Arrival, EventKind::Timer,
                             EventKind::Schedule};
  std::mt19937_64 rng(48);
  for (int trial = 0; trial < 200; ++trial) {
    EventQueue q;
    std::set<Key> want;
    uint64_t posted = 0;
    const int64_t span = 1 + static_cast<int64_t>(rng() % 50);  // small: many ties of time
    int64_t now = 0;
    for (int op = 0; op < 2000; ++op) {
      const uint64_t r = rng() % 10;
      if (r < 5 || want.empty()) {  // post, at or after the last event popped
        const EventKind k = kinds[rng() % 4];
        const int64_t t = now + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
        const auto replica = static_cast<uint32_t>(rng() % 4);
        const Event e = make(k, t, replica);
        q.post(e);
        want.insert({t, phase_of(k), e.order_replica(), posted++, k});
      } else if (r < 8) {  // pop, sometimes twice running
        for (int twice = 0; twice < (r == 7 ? 2 : 1) && !want.empty(); ++twice) {
          REQUIRE_FALSE(q.empty());
          const Event& top = q.top();
          const Key& w = *want.begin();
          REQUIRE(top.time().count_ns() == std::get<0>(w));
          REQUIRE(top.kind() == std::get<4>(w));
          REQUIRE(top.order_replica() == std::get<2>(w));
          now = std::get<0>(w);
          want.erase(want.begin());
          q.pop();
        }
      } else {  // read without popping
        REQUIRE(q.empty() == want.empty());
        if (!want.empty()) CHECK(q.top().time().count_ns() == std::get<0>(*want.begin()));
      }
      REQUIRE(q.empty() == want.empty());
    }
    while (!want.empty()) {  // drain
      REQUIRE(q.top().time().count_ns() == std::get<0>(*want.begin()));
      REQUIRE(q.top().kind() == std::get<4>(*want.begin()));
      want.erase(want.begin());
      q.pop();
    }
    CHECK(q.empty());
  }
}

TEST_CASE("event queue: the slot beside the heap, the heap emptied, then refilled", "[sim]") {
  EventQueue q;
  q.post(Event::step_end(Time::ns(10), 1));
  q.post(Event::step_end(Time::ns(5), 2));  // earlier: the slot beside the heap
  q.post(Event::step_end(Time::ns(20), 3));
  CHECK(q.top().time().count_ns() == 5);
  q.pop();  // the slot
  CHECK(q.top().time().count_ns() == 10);
  q.pop();  // the heap's root
  q.pop();  // its last
  CHECK(q.empty());
  q.post(Event::timer(Time::ns(30), 0));
  REQUIRE_FALSE(q.empty());
  CHECK(q.top().time().count_ns() == 30);
  CHECK(q.top().kind() == EventKind::Timer);
  q.pop();
  CHECK(q.empty());
}

}  // namespace t_sim_event_queue_test
