#include "sizing/sweep_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace servesim {

std::vector<PointResult> evaluate_points(const SweepSpec& spec, const std::vector<size_t>& indices,
                                         unsigned jobs, const std::function<void(size_t)>& on_done,
                                         const RunLimits& limits) {
  std::vector<PointResult> rows(indices.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  // Each worker takes the next index; a row is written only to its own slot.
  auto work = [&] {
    for (;;) {
      const size_t k = next.fetch_add(1);
      if (k >= indices.size() || failed.load()) return;
      try {
        rows[k] = evaluate_point(spec, indices[k], limits);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
        return;
      }
      const size_t n = done.fetch_add(1) + 1;
      if (on_done) on_done(n);
    }
  };
  const size_t threads = std::clamp<size_t>(jobs, 1, std::max<size_t>(indices.size(), 1));
  if (threads == 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(threads);
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  }  // the jthreads join here
  if (error) std::rethrow_exception(error);
  return rows;
}

}  // namespace servesim
