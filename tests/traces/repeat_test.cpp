// workload.transform.repeat_to_s (traces/repeat.cpp): the transformed workload replayed end to
// end, a copy's span plus its mean gap apart, ids continued, until it covers the time asked.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_paths.h"
#include "tests/traces/trace_test_support.h"

namespace t_traces_repeat_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Four requests at 1, 2, 3 and 4 s: span 3 s, mean gap 1 s, so a copy every 4 s.
std::unique_ptr<WorkloadSource> repeated(const std::string& keys) {
  static const std::string path =
      write_temp("repeat-four.csv",
                 "arrival_s,prompt_tokens,output_tokens\n1,100,10\n2,200,20\n3,300,30\n"
                 "4,400,40\n");
  return workload_of("trace: {path: " + path + "}\ntransform: {" + keys + "}\n");
}

constexpr int64_t s(double seconds) { return static_cast<int64_t>(seconds * 1e9); }

}  // namespace

TEST_CASE("repeat: copies follow a span and a mean gap apart until the time is covered",
          "[traces]") {
  auto source = repeated("repeat_to_s: 10");
  const std::vector<RequestSpec> rows = drain(*source);
  // From the first arrival (1 s) to 11 s, exclusive: 1..4, 5..8, 9..10.
  CHECK(arrivals_ns(rows) ==
        std::vector<int64_t>{s(1), s(2), s(3), s(4), s(5), s(6), s(7), s(8), s(9), s(10)});
  CHECK(ids(rows) == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(rows[5].prompt_tokens == 200);  // copy 1's second request
  CHECK(source->counters() ==
        std::vector<std::pair<std::string, int64_t>>{{"transform_repeats", 3}});
}

TEST_CASE("repeat: applies after the rest of the transform", "[traces]") {
  // rate_scale 2 first: arrivals 0.5..2 s, a copy every 2 s; 5 s from 0.5 s.
  const std::vector<RequestSpec> rows = drain(*repeated("rate_scale: 2, repeat_to_s: 5"));
  CHECK(arrivals_ns(rows) ==
        std::vector<int64_t>{s(0.5), s(1), s(1.5), s(2), s(2.5), s(3), s(3.5), s(4), s(4.5), s(5)});
  // A length filter drops the same request of every copy, and counts each drop: 1..3 s kept,
  // a copy every 3 s.
  auto filtered = repeated("max_prompt_tokens: 300, repeat_to_s: 8");
  const std::vector<RequestSpec> kept = drain(*filtered);
  CHECK(arrivals_ns(kept) == std::vector<int64_t>{s(1), s(2), s(3), s(4), s(5), s(6), s(7), s(8)});
  CHECK(ids(kept) == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(filtered->counters() ==
        std::vector<std::pair<std::string, int64_t>>{{"transform_dropped_prompt_tokens", 2},
                                                     {"transform_repeats", 3}});
}

TEST_CASE("repeat: repeat_to_s is checked", "[traces]") {
  CHECK_THAT(error_from([] { (void)repeated("repeat_to_s: 0"); }),
             Catch::Contains("repeat_to_s") && Catch::Contains("0"));
  CHECK_THAT(error_from([] { (void)repeated("repeat_to_s: 10, max_prompt_tokens: 100"); }),
             Catch::Contains("at least two requests"));
}

}  // namespace t_traces_repeat_test
