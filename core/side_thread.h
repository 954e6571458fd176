#pragma once
// A run's helper thread for its input and output (requests.csv formatted and written beside
// the engine, metrics/requests_csv.cpp; a trace read ahead, traces/read_ahead.h), so that one
// run uses a second CPU for work that needs none of the engine's state.
//
// The thread starts with every signal blocked: an asynchronous signal (Ctrl-C, SIGTERM) then
// reaches a thread that runs the engine, whose handler asks the run to stop (core/interrupt.h),
// and a write past the file-size limit fails with EFBIG there as in the engine's thread
// (core/file_sink.h).
#include <functional>
#include <optional>
#include <thread>

namespace servesim {

/// The CPUs this process may run on (its affinity mask, as `taskset` sets it), at least 1.
[[nodiscard]] int usable_cpus();

/// Starts `body` on a new thread with every signal blocked. Returns no thread when the system
/// refuses one (a thread limit, memory): the caller then does the work itself.
[[nodiscard]] std::optional<std::thread> start_side_thread(std::function<void()> body);

}  // namespace servesim
