// The tenants' figures and Jain's index (metrics/tenants.cpp) on requests timed by hand over
// several seconds, so that each second of the fairness window, its fractional edges, the
// water-filling of fair shares and the printed lines are pinned (docs/metrics.md#tenants-and-
// fairness).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/request.h"
#include "metrics/metrics.h"
#include "metrics/tenants.h"
#include "sim/simulation.h"

namespace t_metrics_tenant_window_test {

using namespace servesim;

namespace {

Request req(uint64_t id, uint16_t tenant, double arrival_s, int32_t prompt, int32_t output,
            double first_s, double last_s, RequestState state = RequestState::Released) {
  Request r;
  r.spec.id = id;
  r.spec.tenant_id = tenant;
  r.spec.arrival = Time::from_seconds(arrival_s);
  r.spec.prompt_tokens = prompt;
  r.spec.output_tokens = output;
  r.state = state;
  if (state == RequestState::Released) {
    r.first_admitted = r.spec.arrival;
    r.first_token = Time::from_seconds(first_s);
    r.last_token = r.finish = r.release = Time::from_seconds(last_s);
  }
  return r;
}

Summary summarize(const std::vector<Request>& rs, const std::vector<std::string>& names) {
  MetricsRecorder m;
  m.set_tenant_names(&names);
  for (const Request& r : rs) m.record(r);
  RunStats stats;
  stats.tenant_names = names;
  return m.summary(stats);
}

}  // namespace

TEST_CASE("tenant window: each second's tokens, the window's edges and the fair shares",
          "[metrics]") {
  // Tenant a: a0 at 0 s (10 + 5 tokens, first token 0.5 s, last 2.5 s), a1 at 3 s (2 + 2,
  // 3.25 to 3.75 s), a2 at 2.25 s (3 + 1, 3.5 s). Tenant b: b0 at 1.5 s (4 + 3, 2 to 3 s), b1 at
  // 2.5 s (1 + 1, 2.75 s), b2 at 2 s (1 + 1) rejected.
  // Served a second (prompt + first token at the first token, the rest evenly to the last):
  // a: [0,1) 11 + 1, [1,2) 2, [2,3) 1, [3,4) 3 + 1 + 4; b: [2,3) 5 + 2 + 2.
  // Demand at arrival: a: [0,1) 15, [2,3) 4, [3,4) 4; b: [1,2) 7, [2,3) 2 + 2.
  // Window: from the later first arrival (b, 1.5 s) to the earlier last arrival (b, 2.5 s):
  // half of [1,2) and half of [2,3). Served: a 2/2 + 1/2 = 1.5, b 9/2 = 4.5 (6 in all).
  // Demand: a 4/2 = 2, b 7/2 + 4/2 = 5.5; 7.5 > 6: a gets its 2, b the 4 left.
  // Ratios 1.5/2 = 0.75 and 4.5/4 = 1.125: Jain (15/8)^2 / (2 x 117/64) = 25/26.
  const std::vector<std::string> names{"a", "b"};
  const Summary s = summarize(
      {req(0, 0, 0.0, 10, 5, 0.5, 2.5), req(1, 0, 3.0, 2, 2, 3.25, 3.75),
       req(2, 0, 2.25, 3, 1, 3.5, 3.5), req(3, 1, 1.5, 4, 3, 2.0, 3.0),
       req(4, 1, 2.5, 1, 1, 2.75, 2.75), req(5, 1, 2.0, 1, 1, 0, 0, RequestState::Rejected)},
      names);
  REQUIRE(s.tenants.size() == 2);
  const TenantSummary& a = s.tenants[0].second;
  const TenantSummary& b = s.tenants[1].second;
  CHECK(s.tenants[0].first == "a");
  CHECK(s.tenants[1].first == "b");
  CHECK(a.finished == 3);
  CHECK(b.finished == 2);
  CHECK(b.rejected == 1);
  CHECK(a.prompt_tokens == 15);
  CHECK(a.output_tokens == 8);
  CHECK(b.prompt_tokens == 5);
  CHECK(b.output_tokens == 4);
  CHECK(a.service_share == Approx(23.0 / 32.0));
  CHECK(b.service_share == Approx(9.0 / 32.0));
  REQUIRE(s.duration_s == Approx(3.75));
  CHECK(a.output_tokens_per_s == Approx(8 / 3.75));
  CHECK(b.output_tokens_per_s == Approx(4 / 3.75));
  CHECK(a.window_tokens == Approx(1.5));
  CHECK(b.window_tokens == Approx(4.5));
  CHECK(a.window_demand_tokens == Approx(2.0));
  CHECK(b.window_demand_tokens == Approx(5.5));
  CHECK(a.fair_share_tokens == Approx(2.0));
  CHECK(b.fair_share_tokens == Approx(4.0));
  REQUIRE(s.fairness);
  CHECK(s.fairness->tenants == 2);
  CHECK(s.fairness->window_start_s == Approx(1.5));
  CHECK(s.fairness->window_end_s == Approx(2.5));
  CHECK(s.fairness->jain_index == Approx(25.0 / 26.0));
  CHECK(tenant_lines(s) ==
        "tenant     a: 3 finished, 0 rejected; 2.1 output tokens/s, 71.9% of tokens served; "
        "TTFT p50 500.0 ms, p99 1235.0 ms\n"
        "tenant     b: 2 finished, 1 rejected; 1.1 output tokens/s, 28.1% of tokens served; "
        "TTFT p50 375.0 ms, p99 497.5 ms\n"
        "fairness   Jain's index 0.962 over 2 tenants' tokens served from 1.5 s to 2.5 s (while "
        "every tenant was sending)\n");
}

TEST_CASE("tenant window: no window without overlap or with a silent tenant", "[metrics]") {
  const std::vector<std::string> two{"a", "b"};
  // a sends before b starts: the window [1 s, 0.5 s] is empty.
  Summary s = summarize({req(0, 0, 0.0, 1, 1, 0.1, 0.1), req(1, 0, 0.5, 1, 1, 0.6, 0.6),
                         req(2, 1, 1.0, 1, 1, 1.1, 1.1), req(3, 1, 2.0, 1, 1, 2.1, 2.1)},
                        two);
  CHECK(s.tenants.size() == 2);
  CHECK_FALSE(s.fairness);
  CHECK(s.tenants[0].second.window_tokens == 0);
  // Both send at exactly the same two instants: a window of one instant is still empty.
  s = summarize({req(0, 0, 1.0, 1, 1, 1.1, 1.1), req(1, 1, 1.0, 1, 1, 1.2, 1.2)}, two);
  CHECK_FALSE(s.fairness);
  // A third tenant that sent nothing: listed with nothing, and no fairness block.
  const std::vector<std::string> three{"a", "b", "c"};
  s = summarize({req(0, 0, 0.0, 1, 1, 0.1, 0.1), req(1, 0, 2.0, 1, 1, 2.1, 2.1),
                 req(2, 1, 0.5, 1, 1, 0.6, 0.6), req(3, 1, 1.5, 1, 1, 1.6, 1.6)},
                three);
  REQUIRE(s.tenants.size() == 3);
  CHECK(s.tenants[2].first == "c");
  CHECK(s.tenants[2].second.finished == 0);
  CHECK(s.tenants[2].second.service_share == 0);
  CHECK_FALSE(s.fairness);
  // The same two tenants alone overlap over [0.5 s, 1.5 s]: half of each of the first two
  // seconds. Served: a's 2 tokens at 0.1 s count half (1), b's 2 at 0.6 s and 2 at 1.6 s half
  // each (2); demand likewise 1 and 2, within the 3 served: each got its share, index 1.
  s = summarize({req(0, 0, 0.0, 1, 1, 0.1, 0.1), req(1, 0, 2.0, 1, 1, 2.1, 2.1),
                 req(2, 1, 0.5, 1, 1, 0.6, 0.6), req(3, 1, 1.5, 1, 1, 1.6, 1.6)},
                two);
  REQUIRE(s.fairness);
  CHECK(s.fairness->window_start_s == Approx(0.5));
  CHECK(s.fairness->window_end_s == Approx(1.5));
  CHECK(s.tenants[0].second.window_tokens == Approx(1.0));
  CHECK(s.tenants[1].second.window_tokens == Approx(2.0));
  CHECK(s.tenants[0].second.window_demand_tokens == Approx(1.0));
  CHECK(s.tenants[1].second.window_demand_tokens == Approx(2.0));
  CHECK(s.tenants[0].second.fair_share_tokens == Approx(1.0));
  CHECK(s.tenants[1].second.fair_share_tokens == Approx(2.0));
  CHECK(s.fairness->jain_index == Approx(1.0));
}

TEST_CASE("tenant window: 32 tenant lines, then a count of the rest", "[metrics]") {
  for (const size_t n : {size_t{32}, size_t{33}, size_t{35}}) {
    INFO(n);
    Summary s;
    for (size_t k = 0; k < n; ++k) s.tenants.emplace_back("t" + std::to_string(k), TenantSummary{});
    const std::string out = tenant_lines(s);
    size_t lines = 0;
    for (const char c : out) lines += c == '\n';
    CHECK(lines == (n > 32 ? 33 : 32));
    CHECK(out.find("tenant     t31:") != std::string::npos);
    CHECK(out.find("tenant     t32:") == std::string::npos);
    if (n > 32)
      CHECK_THAT(out,
                 Catch::EndsWith(fmt::format(
                     "tenant     ... {} more tenants (summary.json lists every one)\n", n - 32)));
  }
}

TEST_CASE("tenant window: max-min shares at the edges", "[metrics]") {
  CHECK(max_min_shares({}, 5).empty());
  CHECK(max_min_shares({1, 2}, 0) == std::vector<double>{0, 0});
  // Exactly the demand: each gets its own.
  CHECK(max_min_shares({1, 3}, 4) == std::vector<double>{1, 3});
  // No demand at all: the capacity split evenly.
  CHECK(max_min_shares({0, 0}, 4) == std::vector<double>{2, 2});
  // Equal demands over the capacity: equal levels, in input order.
  CHECK(max_min_shares({5, 5, 5}, 6) == std::vector<double>{2, 2, 2});
  // The smallest demand is met even when listed last.
  CHECK(max_min_shares({10, 8, 1}, 7) == std::vector<double>{3, 3, 1});
}

}  // namespace t_metrics_tenant_window_test
