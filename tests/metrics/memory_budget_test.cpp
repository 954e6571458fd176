// The memory estimate and its checks (metrics/memory_budget.h): a run whose floor is above a
// limit is refused before it starts, one whose overload peak is above it is warned of, and both
// name the figure and the options that bound a run. The estimate's figures against a measured
// run are checked by tests/cli/memory_limit_test.sh (a real process under `ulimit -v`).
#include "metrics/memory_budget.h"

#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_metrics_memory_budget_test {

using namespace servesim;
using namespace servesim::test;

namespace {

Scenario scenario_of(int64_t requests) {
  return build_scenario(doc_of(
      "workload:\n  synthetic:\n    requests: " + std::to_string(requests) +
      "\n    arrival: {kind: poisson, rate_per_s: 2}\n    prompt_tokens: {kind: fixed, value: "
      "10}\n    output_tokens: {kind: fixed, value: 5}\nstep_time: {kind: linear, base_ms: "
      "1}\nscheduler: {kind: continuous, max_num_seqs: 8}\nkv: {policy: paged, "
      "capacity_tokens: 1000}\n"));
}

constexpr int64_t k_mib = 1 << 20;

}  // namespace

TEST_CASE("memory budget: the estimate grows with the requests held and the rows kept",
          "[metrics][memory]") {
  RunOptions o;
  const MemoryNeed small = estimate_memory(scenario_of(100), o, {});
  CHECK(small.requests == 100);
  CHECK(small.held == 100);
  CHECK(small.floor_bytes == MemoryCosts::k_base_bytes + 100 * MemoryCosts::k_sketch_request_bytes +
                                 MemoryCosts::k_gap_sketch_bytes);
  CHECK(small.peak_bytes == small.floor_bytes + 100 * MemoryCosts::k_held_request_bytes);
  // Held requests stop at the queue limit; kept rows (Python) count every request.
  o.limits.max_queued = 10;
  const MemoryNeed capped = estimate_memory(scenario_of(100), o, python_memory_use(true, false));
  CHECK(capped.held == 10);
  CHECK(capped.floor_bytes == small.floor_bytes + 100 * MemoryCosts::k_kept_row_bytes);
  o.no_requests_csv = true;
  CHECK(estimate_memory(scenario_of(100), o, python_memory_use(true, false)).floor_bytes ==
        small.floor_bytes);
}

TEST_CASE("memory budget: a floor above the limit is refused, a peak above it is warned of",
          "[metrics][memory]") {
  MemoryNeed need;
  need.requests = 20'000'000;
  need.held = 2'000'000;
  need.floor_bytes = 200 * k_mib;
  need.peak_bytes = 1400 * k_mib;
  MemoryLimits limits;
  CHECK(check_memory(need, limits, {}).empty());  // no limit known: nothing to say
  limits.address_space_bytes = 1024 * k_mib;
  limits.available_bytes = 64LL * 1024 * k_mib;
  CHECK(check_memory(need, limits, {}) ==
        "a run of 20000000 requests may need up to 1.4 GiB if up to 2000000 of them are held at "
        "once (an "
        "overload), more than the address-space limit (ulimit -v) of 1.0 GiB: if memory runs "
        "out the run stops and writes nothing; bound the requests held at once with "
        "--max-queued (each holds about 600 bytes), run fewer requests or raise the limit");
  limits.available_bytes = 100 * k_mib;  // the tighter of the two is named
  try {
    (void)check_memory(need, limits, python_memory_use(true, true));
    FAIL("no OutOfMemory");
  } catch (const OutOfMemory& e) {
    CHECK(
        std::string(e.what()) ==
        "not enough memory: a run of 20000000 requests needs at least 200 MiB "
        "(docs/performance.md#memory), more than the 100 MiB of memory this machine has "
        "available; bound the requests held at once with max_queued= (each holds about 600 "
        "bytes), keep fewer rows in memory (request_table=False, steps=False), run fewer requests "
        "or raise the limit; nothing was written");
  }
}

TEST_CASE("memory budget: the out-of-memory message names the limit and the options",
          "[metrics][memory]") {
  MemoryLimits limits;
  limits.address_space_bytes = 512 * k_mib;
  CHECK(out_of_memory_message(limits, {}) ==
        "out of memory: the run needed more memory than it could get (the address-space limit "
        "(ulimit -v) of 512 MiB); bound the requests held at once with --max-queued (each holds "
        "about 600 bytes), run fewer requests or raise the limit; nothing was written");
  CHECK_THAT(out_of_memory_message({}, {}), Catch::StartsWith("out of memory: the run needed "
                                                              "more memory than it could get; "));
}

}  // namespace t_metrics_memory_budget_test
