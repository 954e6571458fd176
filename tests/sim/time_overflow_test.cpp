// Issue 19: a run whose simulated time would pass int64 nanoseconds stops with an InputError
// naming the step-time input, instead of writing negative or wrapped times.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_sim_time_overflow_test {

using namespace servesim;
using namespace servesim::test;

namespace {
const std::string k_sched = "{kind: continuous, max_num_seqs: 4}";
const std::string k_kv = "{policy: paged, capacity_tokens: 10000}";

/// A step model whose every step takes `ms`. A config key refuses so long a step as implausible
/// (docs/config.md), so the hostile value comes the other way in: a measured table's file.
std::string steps_of(const std::string& ms) {
  const std::string file = write_temp("overflow-" + ms + ".csv", "batch,ms\n1," + ms + "\n");
  return "{kind: table, points_file: \"" + file + "\"}";
}
}  // namespace

TEST_CASE("time overflow: a step time a config key gives is refused when implausible",
          "[sim][overflow][hostile]") {
  CHECK_THAT(
      input_error_of(trace_scenario("0,1,2\n", "{kind: linear, base_ms: 1e12}", k_sched, k_kv)),
      Catch::Contains("not a plausible duration in ms"));
}

TEST_CASE("time overflow: steps of 1e12 ms stop the run before the clock wraps",
          "[sim][overflow][hostile]") {
  // 1e9 s a step: the tenth step would end at 1e10 s. On main finish times went negative.
  const std::string msg =
      input_error_of(trace_scenario("0,1,20\n", steps_of("1e12"), k_sched, k_kv));
  CHECK(msg ==
        "step_time: a step of 1e+12 ms (replica 0, 1 sequences, 0 prefill tokens) starting at "
        "9e+09 s of simulated time would end past the simulator's limit of 9.2e+09 s; the "
        "step-time model or its inputs give steps too long for this workload's arrival times");
}

TEST_CASE("time overflow: a step of 1e300 ms is refused, not rounded to 1 ns",
          "[sim][overflow][hostile]") {
  CHECK_THAT(input_error_of(trace_scenario("0,1,2\n", steps_of("1e300"), k_sched, k_kv)),
             Catch::StartsWith("step_time: a step of 1e+300 ms (replica 0, 1 sequences, 1 prefill "
                               "tokens) starting at 0 s"));
}

TEST_CASE("time overflow: a step shorter than 1 ns takes 1 ns, so time always advances",
          "[sim][overflow][hostile]") {
  // 1e-7 ms is 0.1 ns, which rounds to 0: each step is taken as 1 ns. Prompt 1, 3 tokens:
  // steps end at 1, 2 and 3 ns.
  const auto reqs =
      run_requests(trace_scenario("0,1,3\n", "{kind: linear, base_ms: 1e-7}", k_sched, k_kv));
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].first_token.count_ns() == 1);
  CHECK(reqs[0].finish.count_ns() == 3);
}

TEST_CASE("time overflow: an arrival near the 9e9 s limit with long steps",
          "[sim][overflow][hostile]") {
  // 1e7 s steps from 8.9e9 s: the 31st would end at 9.21e9 s, past 9.2e9 s.
  CHECK_THAT(input_error_of(trace_scenario("8900000000,1,40\n", steps_of("1e10"), k_sched, k_kv)),
             Catch::StartsWith("step_time: a step of 1e+10 ms"));
  // Shorter runs near the limit still finish, at exact times.
  const auto reqs =
      run_requests(trace_scenario("8900000000,1,3\n", steps_of("1e10"), k_sched, k_kv));
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].finish.count_ns() == 8'930'000'000'000'000'000);
}

TEST_CASE("time overflow: a swap link too slow for its swap space is refused",
          "[sim][overflow][hostile]") {
  const std::string msg = input_error_of(
      trace_scenario("0,1,2\n", "{kind: linear, base_ms: 1}",
                     "{kind: continuous, max_num_seqs: 4, preemption_mode: swap, swap_space_gb: 4, "
                     "swap_bandwidth_gb_s: 1e-12, kv_bytes_per_token: 1000}",
                     k_kv));
  CHECK_THAT(msg, Catch::StartsWith("scheduler.swap_bandwidth_gb_s = \"1e-12\" at "));
  CHECK_THAT(msg, Catch::EndsWith(": moving the whole swap space (4 GB) at this rate takes 4e+12 "
                                  "s, more than the limit of 1e6 s"));
}

}  // namespace t_sim_time_overflow_test
