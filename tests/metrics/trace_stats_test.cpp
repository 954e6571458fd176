// The arrival figures of `servesim trace stats` (metrics/trace_stats.cpp) at their edges.
#include "metrics/trace_stats.h"

#include <catch2/catch.hpp>

namespace t_metrics_trace_stats_test {

using namespace servesim;

namespace {

nlohmann::ordered_json stats_of(const std::vector<int64_t>& arrivals_ns) {
  TraceStats s(1'000'000'000);
  uint64_t id = 0;
  for (const int64_t t : arrivals_ns) {
    RequestSpec r;
    r.id = id++;
    r.arrival = Time::ns(t);
    r.prompt_tokens = 10;
    r.output_tokens = 5;
    s.add(r);
  }
  return s.figures();
}

}  // namespace

TEST_CASE("trace stats: gap figures at the smallest gaps", "[metrics][trace_stats]") {
  // Arrivals 1 ns apart: gap mean 1 ns, every gap equal, so the coefficient of variation is 0.
  const auto even = stats_of({0, 1, 2});
  CHECK(even["gap_mean_s"].get<double>() == Approx(1e-9));
  REQUIRE_FALSE(even["gap_cv"].is_null());
  CHECK(even["gap_cv"].get<double>() == 0.0);
  CHECK(even["mean_rate_per_s"].get<double>() == Approx(1e9));
  // Gaps 0 and 1 ns: mean 0.5 ns, deviation 0.5 ns: cv 1.
  const auto uneven = stats_of({0, 0, 1});
  REQUIRE_FALSE(uneven["gap_cv"].is_null());
  CHECK(uneven["gap_cv"].get<double>() == Approx(1.0));
  // All at one instant: no duration, so no rate and no cv; one request: no gaps at all.
  const auto burst = stats_of({5, 5, 5});
  CHECK(burst["mean_rate_per_s"].is_null());
  CHECK(burst["gap_cv"].is_null());
  CHECK(burst["gap_mean_s"].get<double>() == 0.0);
  const auto one = stats_of({5});
  CHECK(one["gap_mean_s"].is_null());
  CHECK(one["gap_cv"].is_null());
}

TEST_CASE("trace stats: a block hash past the prompt's end covers no tokens",
          "[metrics][trace_stats]") {
  // Two requests of 5 prompt tokens, blocks of 4 and three block hashes each (more than the
  // prompt covers): block 0 holds tokens 0-3, block 1 token 4 only, block 2 none. The second
  // request repeats the first's hashes, so all its 3 blocks hit.
  TraceStats s(1'000'000'000);
  for (uint64_t id = 0; id < 2; ++id) {
    RequestSpec r;
    r.id = id;
    r.arrival = Time::ns(static_cast<int64_t>(id));
    r.prompt_tokens = 5;
    r.output_tokens = 1;
    r.block_hashes = {1, 2, 3};
    r.hash_block_tokens = 4;
    s.add(r);
  }
  const auto p = s.figures()["prefix_reuse"];
  CHECK(p["blocks"].get<int64_t>() == 6);
  CHECK(p["hit_blocks"].get<int64_t>() == 3);
  CHECK(p["hashed_tokens"].get<int64_t>() == 10);  // (4 + 1 + 0) x 2
  CHECK(p["hit_tokens"].get<int64_t>() == 5);      // the second request's 4 + 1 + 0
  CHECK(p["hit_fraction_of_prompt_tokens"].get<double>() == Approx(0.5));
}

}  // namespace t_metrics_trace_stats_test
