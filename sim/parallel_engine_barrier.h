#pragma once
// The parallel engine's window barrier (sim/parallel_engine.h): the calling thread starts a
// round (a window, or the parts' finishing), the worker threads run their shards and report
// back. A window of a small fleet is a few hundred microseconds of work, so a barrier that
// sleeps at once (std::barrier: a futex after a few tries) costs the threads a wake-up each
// round, tens of microseconds on a virtual machine, twice a window. Here a waiting thread
// spins first, for up to k_spin (longer than a window's usual imbalance and its routing), and
// only then sleeps on the atomic (std::atomic::wait, a futex), so that a thread that waits
// long does not hold a core the machine's other work needs.
#include <atomic>
#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace servesim::parallel_detail {

class WindowBarrier {
 public:
  explicit WindowBarrier(uint32_t workers) : m_workers(workers) {}

  /// The calling thread: starts round `round() + 1`; the workers waiting for it go.
  void start_round() {
    m_done.store(0, std::memory_order_relaxed);
    m_round.fetch_add(1, std::memory_order_release);
    m_round.notify_all();
  }
  /// A worker: waits for the round after `seen` to start, and returns its number.
  uint32_t wait_round(uint32_t seen) {
    return wait_until(m_round, [seen](uint32_t v) { return v != seen; });
  }
  /// A worker: its part of the round is done.
  void arrive() {
    if (m_done.fetch_add(1, std::memory_order_acq_rel) + 1 == m_workers) m_done.notify_one();
  }
  /// The calling thread: waits until every worker has arrived.
  void wait_done() {
    wait_until(m_done, [this](uint32_t v) { return v == m_workers; });
  }

  /// How long a thread spins before it sleeps.
  static constexpr std::chrono::microseconds k_spin{200};

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
  template <class Ready>
  static uint32_t wait_until(std::atomic<uint32_t>& a, Ready ready) {
    uint32_t v = a.load(std::memory_order_acquire);
    if (ready(v)) return v;
    const auto until = std::chrono::steady_clock::now() + k_spin;
    for (uint32_t i = 1;; ++i) {
      pause();
      v = a.load(std::memory_order_acquire);
      if (ready(v)) return v;
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until) break;
    }
    for (;;) {  // sleep until it changes
      a.wait(v, std::memory_order_acquire);
      v = a.load(std::memory_order_acquire);
      if (ready(v)) return v;
    }
  }

  const uint32_t m_workers;
  // Apart, so that the workers' arrivals do not take the line the round sits on from them.
  alignas(64) std::atomic<uint32_t> m_round{0};
  alignas(64) std::atomic<uint32_t> m_done{0};
};

}  // namespace servesim::parallel_detail
