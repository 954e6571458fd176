// The run's helper thread (core/side_thread.h): it runs its body with every signal blocked, the
// starting thread keeps its own mask, and the usable CPUs are counted from the affinity mask.
#include "core/side_thread.h"

#include <pthread.h>
#include <sched.h>

#include <catch2/catch.hpp>
#include <csignal>

namespace t_core_side_thread_test {

using namespace servesim;

TEST_CASE("side thread: the body runs with every signal blocked, the caller's mask kept",
          "[core]") {
  sigset_t before;
  REQUIRE(pthread_sigmask(SIG_SETMASK, nullptr, &before) == 0);
  bool int_blocked = false, term_blocked = false, ran = false;
  std::optional<std::thread> t = start_side_thread([&] {
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, nullptr, &mask);
    int_blocked = sigismember(&mask, SIGINT) == 1;
    term_blocked = sigismember(&mask, SIGTERM) == 1;
    ran = true;
  });
  REQUIRE(t);
  t->join();
  CHECK(ran);
  CHECK(int_blocked);
  CHECK(term_blocked);
  sigset_t after;
  REQUIRE(pthread_sigmask(SIG_SETMASK, nullptr, &after) == 0);
  CHECK(sigismember(&after, SIGINT) == sigismember(&before, SIGINT));
  CHECK(sigismember(&after, SIGTERM) == sigismember(&before, SIGTERM));
}

TEST_CASE("side thread: the usable CPUs are the affinity mask's", "[core]") {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  CHECK(usable_cpus() == CPU_COUNT(&set));
  CHECK(usable_cpus() >= 1);
}

}  // namespace t_core_side_thread_test
