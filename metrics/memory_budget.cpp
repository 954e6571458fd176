#include "metrics/memory_budget.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "core/quantiles.h"

namespace servesim {

namespace {

/// The limit the run meets first, with its name; nullopt when neither is known.
std::optional<std::pair<int64_t, std::string>> tightest(const MemoryLimits& l) {
  std::optional<std::pair<int64_t, std::string>> out;
  if (l.address_space_bytes)
    out = {{*l.address_space_bytes, fmt::format("the address-space limit (ulimit -v) of {}",
                                                format_bytes(*l.address_space_bytes))}};
  if (l.available_bytes && (!out || *l.available_bytes < out->first))
    out = {{*l.available_bytes, fmt::format("the {} of memory this machine has available",
                                            format_bytes(*l.available_bytes))}};
  return out;
}

std::string advice(const MemoryUse& use) {
  const std::string keep = *use.keep_options != '\0'
                               ? fmt::format(", keep fewer rows in memory ({})", use.keep_options)
                               : std::string();
  return fmt::format(
      "bound the requests held at once with {} (each holds about {} bytes){}, run fewer "
      "requests or raise the limit",
      use.bound_options, MemoryCosts::k_held_request_bytes, keep);
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= double(1LL << 30)) return fmt::format("{:.1f} GiB", b / double(1LL << 30));
  if (b >= double(1LL << 20)) return fmt::format("{:.0f} MiB", b / double(1LL << 20));
  return fmt::format("{:.0f} KiB", b / 1024.0);
}

MemoryUse python_memory_use(bool requests, bool steps) {
  MemoryUse u;
  u.requests_in_memory = requests;
  u.steps_in_memory = steps;
  u.bound_options = "max_queued=";
  u.keep_options = "request_table=False, steps=False";
  return u;
}

MemoryNeed estimate_memory(const Scenario& sc, const RunOptions& options, const MemoryUse& use) {
  MemoryNeed n;
  n.requests = static_cast<int64_t>(sc.components.source->size_hint());
  const int64_t max_queued = std::max<int64_t>(1, options.limits.max_queued);
  n.held = n.requests > 0 ? std::min(n.requests, max_queued) : max_queued;
  // One tally for the run, one a replica and a pool in a cluster (MetricsRecorder).
  const auto replicas = static_cast<int64_t>(sc.replica_accelerators.size());
  const int64_t parts =
      replicas > 1 ? replicas + static_cast<int64_t>(sc.components.pools.size()) : 0;
  // A workload of unknown size fills the sketches to their exact limit in the worst case.
  const auto exact = static_cast<int64_t>(QuantileSketch::k_default_exact_limit);
  const int64_t sketched = n.requests > 0 ? std::min(n.requests, exact) : exact;
  const int64_t run_tally =
      sketched * MemoryCosts::k_sketch_request_bytes + MemoryCosts::k_gap_sketch_bytes;
  // A fleet's replicas and pools keep fewer values exactly: three request sketches (TTFT,
  // TPOT, end-to-end) and the gap sketch, each at most MemoryCosts::k_fleet_sketch_bytes.
  const int64_t part_tally = replicas > static_cast<int64_t>(MetricsRecorder::k_fleet_replicas)
                                 ? 4 * MemoryCosts::k_fleet_sketch_bytes
                                 : run_tally;
  n.floor_bytes = MemoryCosts::k_base_bytes + run_tally + parts * part_tally +
                  (use.requests_in_memory && !options.no_requests_csv
                       ? n.requests * MemoryCosts::k_kept_row_bytes
                       : 0);
  n.peak_bytes = n.floor_bytes + n.held * MemoryCosts::k_held_request_bytes;
  return n;
}

MemoryLimits memory_limits() {
  MemoryLimits l;
  rlimit r{};
  if (::getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
    l.address_space_bytes =
        static_cast<int64_t>(std::min<rlim_t>(r.rlim_cur, static_cast<rlim_t>(INT64_MAX)));
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    int64_t kib = 0;
    if (fields >> kib && kib > 0) l.available_bytes = kib * 1024;
    break;
  }
  return l;
}

std::string check_memory(const MemoryNeed& need, const MemoryLimits& limits, const MemoryUse& use) {
  const auto limit = tightest(limits);
  if (!limit) return {};
  const std::string requests = need.requests > 0
                                   ? fmt::format("a run of {} requests", need.requests)
                                   : std::string("a run whose workload size is not known up front");
  if (need.floor_bytes > limit->first)
    throw OutOfMemory(fmt::format(
        "not enough memory: {} needs at least {} (docs/performance.md#memory), more than {}; "
        "{}; nothing was written",
        requests, format_bytes(need.floor_bytes), limit->second, advice(use)));
  if (need.peak_bytes > limit->first)
    return fmt::format(
        "{} may need up to {} if up to {} of them are held at once (an overload), more than {}: "
        "if memory runs out the run stops and writes nothing; {}",
        requests, format_bytes(need.peak_bytes), need.held, limit->second, advice(use));
  return {};
}

std::string out_of_memory_message(const MemoryLimits& limits, const MemoryUse& use) {
  const auto limit = tightest(limits);
  return fmt::format(
      "out of memory: the run needed more memory than it could get{}; {}; "
      "nothing was written",
      limit ? fmt::format(" ({})", limit->second) : std::string(), advice(use));
}

}  // namespace servesim
