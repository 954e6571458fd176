#include "core/side_thread.h"

#include <pthread.h>
#include <sched.h>

#include <csignal>
#include <system_error>

namespace servesim {

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

std::optional<std::thread> start_side_thread(std::function<void()> body) {
  // A new thread inherits its creator's mask: block everything around the creation, then give
  // the creator its own mask back.
  sigset_t all, old;
  sigfillset(&all);
  if (pthread_sigmask(SIG_BLOCK, &all, &old) != 0) return std::nullopt;
  std::optional<std::thread> thread;
  try {
    thread.emplace(std::move(body));
  } catch (const std::system_error&) {
    thread.reset();
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return thread;
}

}  // namespace servesim
