// energy_summary (metrics/energy.h) on two replicas of different chips and sizes, worked by
// hand: a replica down draws nothing while it is, an autoscaled one draws idle power only while
// it is paid for; the per-request and per-token figures stay 0 with nothing to divide by; and
// every size mismatch gives no summary.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "metrics/energy.h"
#include "sim/autoscaler.h"
#include "sim/simulation.h"

namespace t_metrics_energy_edges_test {

using namespace servesim;

namespace {

PowerSpec chip(double idle_w, double peak_w) {
  PowerSpec p;
  p.idle_w = idle_w;
  p.peak_w = peak_w;
  return p;
}

// Replica 0: one chip of 100 W idle, 300 W peak, active 2 s of 3 s busy, down 4 s. Replica 1:
// two chips of 50 W idle, 150 W peak, active 1 s of 1 s busy. 4 steps, 3 of them costed.
RunStats two_replicas() {
  RunStats s;
  s.steps = 4;
  s.costed_steps = 3;
  s.replicas.resize(2);
  s.replicas[0].active_s = 2;
  s.replicas[0].busy_ns = 3'000'000'000;
  s.replicas[0].down_s = 4;
  s.replicas[1].active_s = 1;
  s.replicas[1].busy_ns = 1'000'000'000;
  return s;
}

const std::vector<PowerSpec> k_power{chip(100, 300), chip(50, 150)};
const std::vector<int64_t> k_chips{1, 2};

}  // namespace

TEST_CASE("energy edges: two replicas, one down for a while", "[metrics][energy]") {
  // Held: 10 - 4 = 6 s and 10 s. Idle: 100 x 6 + 2 x 50 x 10 = 1,600 J. Active: 1 x 200 x 2 +
  // 2 x 100 x 1 = 600 J. 2,200 J over 10 s; activity 3 s of 4 s busy; 1 step of 4 at peak.
  const auto e = energy_summary(two_replicas(), k_power, k_chips, 10.0, 4, 1100);
  REQUIRE(e);
  CHECK(e->accelerators == 3);
  CHECK(e->idle_joules == Approx(1600).epsilon(1e-12));
  CHECK(e->joules == Approx(2200).epsilon(1e-12));
  CHECK(e->mean_power_w == Approx(220).epsilon(1e-12));
  CHECK(e->joules_per_request == Approx(550).epsilon(1e-12));
  CHECK(e->joules_per_output_token == Approx(2).epsilon(1e-12));
  CHECK(e->output_tokens_per_joule == Approx(0.5).epsilon(1e-12));
  CHECK(e->busy_activity == Approx(0.75).epsilon(1e-12));
  CHECK(e->steps_at_peak_share == Approx(0.25).epsilon(1e-12));
  // One finished request of one token: the figures are the joules themselves.
  const auto one = energy_summary(two_replicas(), k_power, k_chips, 10.0, 1, 1);
  REQUIRE(one);
  CHECK(one->joules_per_request == Approx(2200).epsilon(1e-12));
  CHECK(one->joules_per_output_token == Approx(2200).epsilon(1e-12));
  // Down longer than the run: no idle power at all for it.
  RunStats long_down = two_replicas();
  long_down.replicas[0].down_s = 12;
  const auto d = energy_summary(long_down, k_power, k_chips, 10.0, 4, 1100);
  REQUIRE(d);
  CHECK(d->idle_joules == Approx(1000).epsilon(1e-12));
  CHECK(d->joules == Approx(1600).epsilon(1e-12));
}

TEST_CASE("energy edges: nothing finished, no steps, autoscaled", "[metrics][energy]") {
  RunStats s = two_replicas();
  s.steps = 0;
  s.costed_steps = 0;
  const auto e = energy_summary(s, k_power, k_chips, 10.0, 0, 0);
  REQUIRE(e);
  CHECK(e->joules_per_request == 0);
  CHECK(e->joules_per_output_token == 0);
  CHECK(e->output_tokens_per_joule == 0);
  CHECK(e->steps_at_peak_share == 0);
  // Nothing ran: no busy time, no activity; idle power over the whole run is still drawn.
  RunStats idle;
  idle.replicas.resize(2);
  const auto i = energy_summary(idle, k_power, k_chips, 2.0, 0, 0);
  REQUIRE(i);
  CHECK(i->busy_activity == 0);
  CHECK(i->joules == Approx(400).epsilon(1e-12));
  // Autoscaled: held 3 s and 5 s, whatever the run's length or downtime. Idle 100 x 3 +
  // 2 x 50 x 5 = 800 J; active 600 J as before.
  s.autoscale.emplace();
  s.autoscale->held_s = {3, 5};
  const auto a = energy_summary(s, k_power, k_chips, 10.0, 0, 0);
  REQUIRE(a);
  CHECK(a->idle_joules == Approx(800).epsilon(1e-12));
  CHECK(a->joules == Approx(1400).epsilon(1e-12));
}

TEST_CASE("energy edges: a size mismatch or no positive duration gives none", "[metrics][energy]") {
  const RunStats s = two_replicas();
  CHECK(energy_summary(s, k_power, k_chips, 10.0, 4, 1100));
  CHECK_FALSE(energy_summary(s, std::vector<PowerSpec>{k_power[0]}, k_chips, 10.0, 4, 1100));
  CHECK_FALSE(energy_summary(s, k_power, std::vector<int64_t>{1}, 10.0, 4, 1100));
  CHECK_FALSE(energy_summary(RunStats{}, {}, {}, 10.0, 4, 1100));
  CHECK_FALSE(energy_summary(s, k_power, k_chips, 0.0, 4, 1100));
  CHECK_FALSE(energy_summary(s, k_power, k_chips, -1.0, 4, 1100));
  CHECK(energy_summary(s, k_power, k_chips, 1e-9, 4, 1100));
}

}  // namespace t_metrics_energy_edges_test
