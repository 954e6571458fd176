// Each request's SLO verdict (metrics/metrics.cpp) at exactly its target and one nanosecond
// past it, for every target, on requests built by hand; and "all met" counting only the
// targets the run has.
#include <catch2/catch.hpp>
#include <vector>

#include "core/request.h"
#include "metrics/metrics.h"
#include "sim/simulation.h"
#include "sim/slo.h"

namespace t_metrics_slo_verdict_edges_test {

using namespace servesim;

namespace {

constexpr int64_t k_ms = 1'000'000;

// Arrives at id x 1 s; first token after `ttft_ns`, then `output - 1` gaps over `span_ns`,
// released `e2e_ns` after arrival.
Request req(uint64_t id, int32_t output, int64_t ttft_ns, int64_t span_ns, int64_t e2e_ns) {
  Request r;
  r.spec.id = id;
  r.spec.arrival = Time::ns(static_cast<int64_t>(id) * 1000 * k_ms);
  r.spec.prompt_tokens = 4;
  r.spec.output_tokens = output;
  r.state = RequestState::Released;
  const int64_t at = r.spec.arrival.count_ns();
  r.first_admitted = r.spec.arrival;
  r.first_token = Time::ns(at + ttft_ns);
  r.last_token = r.finish = Time::ns(at + ttft_ns + span_ns);
  r.release = Time::ns(at + e2e_ns);
  return r;
}

// Targets: TTFT 100 ms, TPOT and ITL 10 ms, E2E 200 ms. A meets each exactly; B misses TTFT by
// 1 ns, C TPOT and ITL (20 ms + 1 ns over 2 gaps), D E2E; E has one token (no gap: TPOT and ITL
// met).
std::vector<Request> requests() {
  return {req(0, 3, 100 * k_ms, 20 * k_ms, 200 * k_ms),
          req(1, 3, 100 * k_ms + 1, 20 * k_ms, 200 * k_ms),
          req(2, 3, 100 * k_ms, 20 * k_ms + 1, 200 * k_ms),
          req(3, 3, 100 * k_ms, 20 * k_ms, 200 * k_ms + 1), req(4, 1, 50 * k_ms, 0, 60 * k_ms)};
}

Summary run(const SloTargets& t) {
  MetricsRecorder m(t);
  for (const Request& r : requests()) m.record(r);
  return m.summary(RunStats{});
}

}  // namespace

TEST_CASE("slo verdict edges: a target is met at exactly its value, missed 1 ns past it",
          "[metrics][slo]") {
  SloTargets t;
  t.ttft_ms = 100;
  t.tpot_ms = 10;
  t.e2e_ms = 200;
  t.itl_ms = 10;
  const Summary s = run(t);
  REQUIRE(s.slo);
  REQUIRE(s.slo->ttft);
  REQUIRE(s.slo->tpot);
  REQUIRE(s.slo->e2e);
  REQUIRE(s.slo->itl);
  CHECK(s.slo->ttft->requests_met == 4);  // all but B
  CHECK(s.slo->tpot->requests_met == 4);  // all but C
  CHECK(s.slo->e2e->requests_met == 4);   // all but D
  CHECK(s.slo->itl->requests_met == 4);   // all but C
  CHECK(s.slo->requests_met == 2);        // A and E
  CHECK(s.slo->attainment == Approx(0.4));
  // The run's check at the 50th percentile: TTFT {50, 100, 100, 100, 100 ms + 1 ns} has its
  // median exactly at the target, and so do TPOT {10, 10, 10, 10 ms + 0.5 ns} and E2E.
  t.percentile = 50;
  const Summary m = run(t);
  CHECK(m.slo->ttft->met);
  CHECK(*m.slo->ttft->percentile_ms == 100.0);
  CHECK(m.slo->tpot->met);
  CHECK(*m.slo->tpot->percentile_ms == 10.0);
  CHECK(m.slo->e2e->met);
  CHECK(*m.slo->e2e->percentile_ms == 200.0);
  CHECK(m.slo->itl->met);
}

TEST_CASE("slo verdict edges: TPOT and ITL with no gap at all are met only with a finished request",
          "[metrics][slo]") {
  SloTargets t;
  t.tpot_ms = 10;
  t.itl_ms = 10;
  t.ttft_ms = 100;
  t.e2e_ms = 200;
  MetricsRecorder one_token(t);
  one_token.record(req(0, 1, 50 * k_ms, 0, 60 * k_ms));
  Summary s = one_token.summary(RunStats{});
  CHECK(s.slo->tpot->met);
  CHECK(s.slo->itl->met);
  CHECK_FALSE(s.slo->tpot->percentile_ms);
  // Nothing finished: no target is met, and nothing has a percentile.
  MetricsRecorder none(t);
  Request r = req(0, 3, 0, 0, 0);
  r.state = RequestState::Rejected;
  none.record(r);
  s = none.summary(RunStats{});
  CHECK_FALSE(s.slo->tpot->met);
  CHECK_FALSE(s.slo->itl->met);
  CHECK_FALSE(s.slo->ttft->met);
  CHECK_FALSE(s.slo->e2e->met);
  CHECK(s.slo->requests_met == 0);
  CHECK(s.slo->attainment == 0);
}

TEST_CASE("slo verdict edges: all met counts only the run's targets", "[metrics][slo]") {
  // One target at a time: the requests missing only another target meet the run's.
  for (int k = 0; k < 4; ++k) {
    INFO("target " << k);
    SloTargets t;
    if (k == 0) t.ttft_ms = 100;
    if (k == 1) t.tpot_ms = 10;
    if (k == 2) t.e2e_ms = 200;
    if (k == 3) t.itl_ms = 10;
    const Summary s = run(t);
    REQUIRE(s.slo);
    CHECK(s.slo->requests_met == 4);
    CHECK(s.slo->ttft.has_value() == (k == 0));
    CHECK(s.slo->tpot.has_value() == (k == 1));
    CHECK(s.slo->e2e.has_value() == (k == 2));
    CHECK(s.slo->itl.has_value() == (k == 3));
  }
  // TTFT and E2E: B and D miss one each.
  SloTargets t;
  t.ttft_ms = 100;
  t.e2e_ms = 200;
  CHECK(run(t).slo->requests_met == 3);
}

}  // namespace t_metrics_slo_verdict_edges_test
