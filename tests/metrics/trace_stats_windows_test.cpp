// The window figures of `servesim trace stats` (metrics/trace_stats.cpp) for arrivals whose
// per-window counts vary by less than one request: the index of dispersion is the counts'
// variance over their mean, 0 for a perfectly regular trace.
#include <catch2/catch.hpp>

#include "metrics/trace_stats.h"

namespace t_metrics_trace_stats_windows_test {

using namespace servesim;

namespace {

nlohmann::ordered_json stats_of(const std::vector<int64_t>& arrivals_ns) {
  TraceStats s(1'000'000'000);  // windows of 1 s
  uint64_t id = 0;
  for (const int64_t t : arrivals_ns) {
    RequestSpec r;
    r.id = id++;
    r.arrival = Time::ns(t);
    r.prompt_tokens = 4;
    r.output_tokens = 2;
    s.add(r);
  }
  return s.figures();
}

}  // namespace

TEST_CASE("trace stats: the index of dispersion below one request of variance",
          "[metrics][trace_stats]") {
  // One arrival a second: windows [0,1), [1,2), [2,3) hold one each; the arrival at 3 s opens
  // the cut-short last window and is left out. Variance 0: index 0, peak over mean 1.
  const auto regular = stats_of({0, 1'000'000'000, 2'000'000'000, 3'000'000'000});
  CHECK(regular["windows"] == 3);
  CHECK(regular["window_requests_left_out"] == 1);
  CHECK(regular["window_requests_mean"].get<double>() == 1.0);
  REQUIRE_FALSE(regular["window_index_of_dispersion"].is_null());
  CHECK(regular["window_index_of_dispersion"].get<double>() == 0.0);
  CHECK(regular["window_peak_to_mean"].get<double>() == 1.0);
  // Counts 1 and 2 (the arrival at 2 s left out): mean 1.5, mean square (1 + 4) / 2 = 2.5,
  // variance 2.5 - 2.25 = 0.25, index 0.25 / 1.5 = 1/6, peak over mean 2 / 1.5.
  const auto uneven = stats_of({0, 1'000'000'000, 1'500'000'000, 2'000'000'000});
  CHECK(uneven["windows"] == 2);
  CHECK(uneven["window_requests_mean"].get<double>() == 1.5);
  CHECK(uneven["window_requests_max"] == 2);
  CHECK(uneven["window_index_of_dispersion"].get<double>() == Approx(1.0 / 6.0));
  CHECK(uneven["window_peak_to_mean"].get<double>() == Approx(4.0 / 3.0));
}

}  // namespace t_metrics_trace_stats_windows_test
