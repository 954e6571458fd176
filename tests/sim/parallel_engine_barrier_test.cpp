// The parallel engine's window barrier (sim/parallel_engine_barrier.h): every round, every worker
// runs once, after the round starts and before the calling thread goes on, whether the threads
// meet while spinning or after sleeping.
#include "sim/parallel_engine_barrier.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace t_sim_parallel_engine_barrier_test {

using servesim::parallel_detail::WindowBarrier;

namespace {

/// `rounds` rounds of `workers` workers, each adding its number to a slot of its own; the
/// calling thread checks every slot after each round. `pause` between rounds makes the workers
/// outwait their spin and sleep.
void rounds_of(uint32_t workers, int rounds, std::chrono::microseconds pause) {
  WindowBarrier sync(workers);
  std::vector<int64_t> sums(workers, 0);
  std::atomic<bool> quit{false};
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      for (uint32_t round = 0;;) {
        round = sync.wait_round(round);
        if (quit.load(std::memory_order_acquire)) return;
        sums[w] += round;
        sync.arrive();
      }
    });
  int64_t expected = 0;
  bool all = true;
  for (int r = 1; r <= rounds; ++r) {
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
    sync.start_round();
    sync.wait_done();
    expected += r;
    for (const int64_t s : sums) all = all && s == expected;
  }
  quit = true;
  sync.start_round();
  for (std::thread& t : threads) t.join();
  CHECK(all);
}

}  // namespace

TEST_CASE("parallel engine barrier: every worker runs once a round, spinning", "[sim][parallel]") {
  rounds_of(1, 2000, std::chrono::microseconds(0));
  rounds_of(3, 2000, std::chrono::microseconds(0));
}

TEST_CASE("parallel engine barrier: workers that slept past their spin wake for the round",
          "[sim][parallel]") {
  rounds_of(2, 20, WindowBarrier::k_spin * 5);
}

}  // namespace t_sim_parallel_engine_barrier_test
