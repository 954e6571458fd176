#pragma once
// Memory as a limit of a run (docs/performance.md#memory): an estimate of the most memory a run
// can need, from its inputs, checked against the process's address-space limit (`ulimit -v`)
// and the machine's available memory before the run starts, and the words servesim uses when
// memory runs out anyway.
//
// What grows with a run: the requests held at once (queued or running: at most --max-queued,
// or the workload's size when smaller), the latency sketches (exact up to 2^21 values each, then
// a fixed histogram), and the requests' and steps' rows when they are kept in memory (Python's
// run() with requests=True or steps=True; the command line streams them to files).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "metrics/run_scenario.h"
#include "sim/scenario.h"

namespace servesim {

/// The run needs more memory than the process may have: refused before it starts (the
/// estimate's floor is above a limit) or stopped when an allocation failed. run_cli prints the
/// message and exits with status 3; the Python module raises MemoryError. Nothing is written.
class OutOfMemory : public std::runtime_error {
 public:
  explicit OutOfMemory(const std::string& what) : std::runtime_error(what) {}
};

/// Bytes of address space (what `ulimit -v` limits), measured with a servesim run's VmPeak
/// (docs/performance.md#memory gives the commands and the figures).
struct MemoryCosts {
  /// The process before any request: the binary, its libraries, the config and tables read.
  static constexpr int64_t k_base_bytes = 48LL << 20;
  /// A request held in the engine at once (queued or running), with the slack of the vectors
  /// that hold them doubling: 400 bytes resident, up to 600 of address space.
  static constexpr int64_t k_held_request_bytes = 600;
  /// A request's values in one tally's four request sketches (TTFT, TPOT, end-to-end, queue,
  /// 8 bytes each), while they are exact (the first 2^21 requests).
  static constexpr int64_t k_sketch_request_bytes = 32;
  /// One tally's inter-token gap sketch at its exact limit (2^21 gaps of 8 bytes) with its
  /// vector's doubling: reached after about 2 million output tokens, so counted for every run.
  static constexpr int64_t k_gap_sketch_bytes = 32LL << 20;
  /// A replica's (or pool's) sketch in a fleet (more than MetricsRecorder::k_fleet_replicas
  /// replicas): at most its 2^16 kept values (512 KiB) or, past them, its histogram (640 KiB).
  static constexpr int64_t k_fleet_sketch_bytes = 640LL << 10;
  /// A requests.csv row kept in memory (Python requests=True): its ~133 bytes of text twice
  /// over while the buffer grows, a copy, and 16 numpy columns of 8 bytes.
  static constexpr int64_t k_kept_row_bytes = 512;
};

/// What a run may need, in bytes.
struct MemoryNeed {
  /// Needed whatever the workload does: the base, the sketches and the rows kept in memory.
  int64_t floor_bytes = 0;
  /// The floor plus every request held at once, up to the queue limit: an overload's peak.
  int64_t peak_bytes = 0;
  int64_t requests = 0;  ///< the workload's size; 0 when not known up front
  int64_t held = 0;      ///< requests that may be held at once: min(requests, max_queued)
};

/// Where the run keeps its rows, and what its caller's options are called.
struct MemoryUse {
  bool requests_in_memory = false;  ///< requests.csv's rows held until the run ends (Python)
  bool steps_in_memory = false;     ///< steps.csv's rows held (Python steps=True): not estimated
  const char* bound_options = "--max-queued";  ///< how the caller's user bounds the run
  const char* keep_options =
      "";  ///< how the caller's user stops keeping rows ("request_table=False")
};

/// The same for Python's run() (python/results.cpp), whose rows are kept unless asked not to.
[[nodiscard]] MemoryUse python_memory_use(bool requests, bool steps);

[[nodiscard]] MemoryNeed estimate_memory(const Scenario& sc, const RunOptions& options,
                                         const MemoryUse& use);

/// The limits a run meets: the address-space limit (RLIMIT_AS; absent when unlimited) and the
/// machine's available memory (/proc/meminfo MemAvailable; absent when it cannot be read).
struct MemoryLimits {
  std::optional<int64_t> address_space_bytes;
  std::optional<int64_t> available_bytes;
};
[[nodiscard]] MemoryLimits memory_limits();

/// Throws OutOfMemory when the floor is above a limit (the run cannot fit, so it is refused
/// before it starts). Returns a warning when the peak is above one (an overload could run out),
/// else an empty string.
[[nodiscard]] std::string check_memory(const MemoryNeed& need, const MemoryLimits& limits,
                                       const MemoryUse& use);

/// The words for memory that ran out during a run: the limits met and the options that bound
/// a run's memory (`use`).
[[nodiscard]] std::string out_of_memory_message(const MemoryLimits& limits, const MemoryUse& use);

/// "1.5 GiB", "300 MiB".
[[nodiscard]] std::string format_bytes(int64_t bytes);

}  // namespace servesim
