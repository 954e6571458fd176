// The memory estimate (metrics/memory_budget.h) at its thresholds: the byte formatter's unit
// changes, a workload of one request, a queue limit of 0, a fleet at and one past the size
// whose replicas keep smaller sketches, and a need exactly at the limit.
#include <sys/resource.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/errors.h"
#include "metrics/memory_budget.h"
#include "metrics/metrics.h"
#include "tests/support.h"

namespace t_metrics_memory_budget_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

Scenario scenario_of(int64_t requests, int replicas = 1) {
  std::string text =
      "workload:\n  synthetic:\n    requests: " + std::to_string(requests) +
      "\n    arrival: {kind: poisson, rate_per_s: 2}\n    prompt_tokens: {kind: fixed, value: "
      "10}\n    output_tokens: {kind: fixed, value: 5}\nstep_time: {kind: linear, base_ms: "
      "1}\nscheduler: {kind: continuous, max_num_seqs: 8}\nkv: {policy: paged, "
      "capacity_tokens: 1000}\n";
  if (replicas > 1)
    text += "cluster: {replicas: " + std::to_string(replicas) + ", router: {kind: round_robin}}\n";
  return build_scenario(doc_of(text));
}

}  // namespace

TEST_CASE("memory budget edges: bytes change unit exactly at 1 MiB and 1 GiB",
          "[metrics][memory]") {
  CHECK(format_bytes(0) == "0 KiB");
  CHECK(format_bytes(1536) == "2 KiB");
  CHECK(format_bytes((1 << 20) - 1) == "1024 KiB");
  CHECK(format_bytes(1 << 20) == "1 MiB");
  CHECK(format_bytes((1 << 30) - 1) == "1024 MiB");
  CHECK(format_bytes(1 << 30) == "1.0 GiB");
  CHECK(format_bytes(3LL << 29) == "1.5 GiB");
}

TEST_CASE("memory budget edges: one request, a queue limit of 0 and fleets around 64 replicas",
          "[metrics][memory]") {
  RunOptions o;
  const int64_t run_tally_of_1 =
      MemoryCosts::k_sketch_request_bytes + MemoryCosts::k_gap_sketch_bytes;
  const MemoryNeed one = estimate_memory(scenario_of(1), o, {});
  CHECK(one.requests == 1);
  CHECK(one.held == 1);
  CHECK(one.floor_bytes == MemoryCosts::k_base_bytes + run_tally_of_1);
  CHECK(one.peak_bytes == one.floor_bytes + MemoryCosts::k_held_request_bytes);
  // A queue limit of 0 (none given) still holds at least one request at a time.
  o.limits.max_queued = 0;
  CHECK(estimate_memory(scenario_of(5), o, {}).held == 1);
  o.limits.max_queued = 3;
  CHECK(estimate_memory(scenario_of(5), o, {}).held == 3);
  CHECK(estimate_memory(scenario_of(2), o, {}).held == 2);

  // Two replicas (no pools): a tally each, as large as the run's.
  o = {};
  const int64_t tally_of_4 =
      4 * MemoryCosts::k_sketch_request_bytes + MemoryCosts::k_gap_sketch_bytes;
  CHECK(estimate_memory(scenario_of(4, 2), o, {}).floor_bytes ==
        MemoryCosts::k_base_bytes + tally_of_4 + 2 * tally_of_4);
  // 64 replicas keep full tallies; from 65 each part keeps the fleet's four small sketches.
  const auto fleet = static_cast<int>(MetricsRecorder::k_fleet_replicas);
  REQUIRE(fleet == 64);
  CHECK(estimate_memory(scenario_of(4, fleet), o, {}).floor_bytes ==
        MemoryCosts::k_base_bytes + tally_of_4 + fleet * tally_of_4);
  CHECK(estimate_memory(scenario_of(4, fleet + 1), o, {}).floor_bytes ==
        MemoryCosts::k_base_bytes + tally_of_4 +
            (fleet + 1) * 4 * MemoryCosts::k_fleet_sketch_bytes);
}

TEST_CASE("memory budget edges: a workload of unknown size is budgeted at the sketch's exact limit",
          "[metrics][memory]") {
  // A transform that drops requests makes the source's size unknown (size_hint 0): the run's
  // tally is then budgeted at the sketch's exact limit, and the queue at max_queued (seed
  // 38044's memory_budget.cpp:68 budgeted no sketch at all).
  const Scenario sc = build_scenario(doc_of(
      "workload:\n  synthetic:\n    requests: 40\n    arrival: {kind: poisson, rate_per_s: 2}\n"
      "    prompt_tokens: {kind: fixed, value: 10}\n    output_tokens: {kind: fixed, value: 5}\n"
      "  transform: {sample_fraction: 0.5}\nstep_time: {kind: linear, base_ms: 1}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\nkv: {policy: paged, capacity_tokens: "
      "1000}\n"));
  REQUIRE(sc.components.source->size_hint() == 0);
  RunOptions o;
  o.limits.max_queued = 7;
  const MemoryNeed n = estimate_memory(sc, o, {});
  CHECK(n.requests == 0);
  CHECK(n.held == 7);
  const auto exact = static_cast<int64_t>(QuantileSketch::k_default_exact_limit);
  CHECK(n.floor_bytes == MemoryCosts::k_base_bytes + exact * MemoryCosts::k_sketch_request_bytes +
                             MemoryCosts::k_gap_sketch_bytes);
  CHECK(n.peak_bytes == n.floor_bytes + 7 * MemoryCosts::k_held_request_bytes);
}

TEST_CASE("memory budget edges: a need exactly at the limit passes, one byte more does not",
          "[metrics][memory]") {
  MemoryNeed need;
  need.requests = 0;
  need.held = 7;
  need.floor_bytes = 100;
  need.peak_bytes = 200;
  MemoryLimits limits;
  limits.address_space_bytes = 200;
  CHECK(check_memory(need, limits, {}).empty());
  limits.address_space_bytes = 199;
  CHECK_THAT(check_memory(need, limits, {}),
             Catch::StartsWith("a run whose workload size is not known up front may need up to "
                               "0 KiB if up to 7 of them") &&
                 Catch::Contains("the address-space limit (ulimit -v) of 0 KiB"));
  limits.address_space_bytes = 100;
  CHECK_FALSE(check_memory(need, limits, {}).empty());
  limits.address_space_bytes = 99;
  CHECK_THROWS_AS(check_memory(need, limits, {}), OutOfMemory);
  // Equal limits: the address space is named (the available memory only when strictly lower).
  limits.address_space_bytes = 300;
  limits.available_bytes = 300;
  need.peak_bytes = 301;
  CHECK_THAT(check_memory(need, limits, {}), Catch::Contains("ulimit -v"));
  limits.available_bytes = 299;
  CHECK_THAT(check_memory(need, limits, {}), Catch::Contains("this machine has available"));
}

TEST_CASE("memory budget edges: the limits read the process's address-space limit as set",
          "[metrics][memory]") {
  // A finite soft limit (1 PiB, or the hard limit when that is lower: far above what this process
  // maps, sanitizer shadow included) is read back exactly; the original is restored after.
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_AS, &before) == 0);
  const rlim_t limit = std::min<rlim_t>(before.rlim_max, rlim_t{1} << 50);
  rlimit set = before;
  set.rlim_cur = limit;
  REQUIRE(::setrlimit(RLIMIT_AS, &set) == 0);
  const MemoryLimits l = memory_limits();
  REQUIRE(::setrlimit(RLIMIT_AS, &before) == 0);
  REQUIRE(l.address_space_bytes.has_value());
  CHECK(*l.address_space_bytes == static_cast<int64_t>(limit));
  if (before.rlim_cur == RLIM_INFINITY) CHECK_FALSE(memory_limits().address_space_bytes);
  // /proc/meminfo is there on Linux: MemAvailable, in bytes.
  if (std::filesystem::exists("/proc/meminfo")) {
    REQUIRE(l.available_bytes.has_value());
    CHECK(*l.available_bytes > 0);
    CHECK(*l.available_bytes % 1024 == 0);
  }
}

}  // namespace t_metrics_memory_budget_edges_test
