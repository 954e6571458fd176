// The autoscaler's rule (sim/autoscaler.h, docs/autoscaling.md) at every edge it has: a signal
// exactly on its target or on the slo signal's halfway mark, the cooldown's last nanosecond and
// its end, a desire exactly the replicas held, the parked replicas left to provision; its books
// (replica-seconds, each replica's paid time, the event counts and bounds) on a timeline worked
// by hand; and the slo signal's verdict on a request exactly at each target.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "core/request.h"
#include "core/time.h"
#include "sim/autoscaler.h"

namespace t_sim_autoscale_rules_test {

using namespace servesim;

namespace {

std::shared_ptr<AutoscaleSpec> spec_of(ScaleSignal signal, double target, uint32_t initial) {
  auto s = std::make_shared<AutoscaleSpec>();
  s->signal = signal;
  s->target = target;
  s->min = 1;
  s->max = 4;
  s->initial = initial;
  s->cooldown = Time::from_seconds(10);
  return s;
}

const Time k_t = Time::from_seconds(1);

}  // namespace

TEST_CASE("autoscale rules: the slo signal adds below target, holds up to halfway, drops there",
          "[sim][autoscale]") {
  const Autoscaler a(spec_of(ScaleSignal::Slo, 0.5, 2), 4);
  CHECK(a.decide(0.4999, k_t) == 1);
  CHECK(a.decide(0.5, k_t) == 0);  // on target
  CHECK(a.decide(0.7499, k_t) == 0);
  CHECK(a.decide(0.75, k_t) == -1);  // (1 + 0.5) / 2
  CHECK(a.decide(1.0, k_t) == -1);
  CHECK(a.decide(std::nan(""), k_t) == 0);
  // At min, a met target drops none; at max, a missed one adds none.
  const Autoscaler low(spec_of(ScaleSignal::Slo, 0.5, 1), 4);
  CHECK(low.decide(1.0, k_t) == 0);
  const Autoscaler high(spec_of(ScaleSignal::Slo, 0.5, 4), 4);
  CHECK(high.decide(0.0, k_t) == 0);
}

TEST_CASE("autoscale rules: a per-replica signal asks for ceil(live x signal / target)",
          "[sim][autoscale]") {
  const Autoscaler a(spec_of(ScaleSignal::Queue, 2, 2), 4);
  CHECK(a.decide(2.0, k_t) == 0);       // 2 exactly
  CHECK(a.decide(2.000001, k_t) == 1);  // a hair over: 3
  CHECK(a.decide(3.0, k_t) == 1);       // 3 exactly, not rounded up to 4
  CHECK(a.decide(1.000001, k_t) == 0);  // 2
  CHECK(a.decide(1.0, k_t) == -1);      // 1 exactly
  CHECK(a.decide(0.0, k_t) == -1);      // 0, held at min 1
  CHECK(a.decide(100.0, k_t) == 2);     // held at max 4
  // Only the parked replicas can be provisioned: 3 replicas in all, 2 live.
  const Autoscaler small(spec_of(ScaleSignal::Queue, 2, 2), 3);
  CHECK(small.decide(100.0, k_t) == 1);
  const Autoscaler kv(spec_of(ScaleSignal::Kv, 0.5, 3), 4);
  CHECK(kv.decide(0.5, k_t) == 0);
  CHECK(kv.decide(1.0 / 3.0, k_t) == -1);  // 3 x (1/3) / 0.5 = 2
}

TEST_CASE("autoscale rules: the cooldown holds to its last nanosecond, from ups and drains",
          "[sim][autoscale]") {
  Autoscaler a(spec_of(ScaleSignal::Queue, 1, 2), 4);
  a.set_phase(2, ReplicaPhase::Provisioning, Time::from_seconds(1));
  const Time end = Time::from_seconds(11);
  CHECK(a.decide(10.0, end - Time::ns(1)) == 0);
  CHECK(a.decide(10.0, end) == 1);                            // 4 wanted, 3 held or coming
  CHECK(a.decide(0.0, end) == 0);                             // no drain while one is provisioning
  a.set_phase(2, ReplicaPhase::Live, Time::from_seconds(5));  // going live restarts nothing
  CHECK(a.decide(10.0, end) == 1);
  CHECK(a.decide(1.0, end) == 0);  // 3 live, 3 wanted
  CHECK(a.decide(0.5, end) == -1);
  a.set_phase(0, ReplicaPhase::Draining, Time::from_seconds(12));
  CHECK(a.decide(10.0, Time::from_seconds(22) - Time::ns(1)) == 0);
  CHECK(a.decide(10.0, Time::from_seconds(22)) == 1);  // 4 wanted; 1 parked, 1 draining
}

TEST_CASE("autoscale rules: the books integrate the paid replicas over a timeline by hand",
          "[sim][autoscale]") {
  Autoscaler a(spec_of(ScaleSignal::Queue, 1, 1), 3);
  a.set_phase(1, ReplicaPhase::Provisioning, Time::from_seconds(2));
  a.set_phase(1, ReplicaPhase::Live, Time::from_seconds(5));
  a.set_phase(0, ReplicaPhase::Draining, Time::from_seconds(7));
  a.set_phase(0, ReplicaPhase::Parked, Time::from_seconds(9));
  const AutoscaleStats s = a.finish(Time::from_seconds(10));
  // 1 paid from 0 to 2, 2 from 2 to 9, 1 from 9 to 10.
  CHECK(s.replica_seconds == Approx(17.0).epsilon(1e-12));
  REQUIRE(s.held_s.size() == 3);
  CHECK(s.held_s[0] == Approx(9.0).epsilon(1e-12));
  CHECK(s.held_s[1] == Approx(8.0).epsilon(1e-12));
  CHECK(s.held_s[2] == 0.0);
  CHECK(s.scale_ups == 1);
  CHECK(s.scale_downs == 1);
  CHECK(s.min_held == 1);
  CHECK(s.max_held == 2);
  CHECK(s.min_live == 1);
  CHECK(s.max_live == 2);
  CHECK(s.horizon_s == 10.0);
  // start, up, live, drain, parked, end: each with the counts after it.
  REQUIRE(s.timeline.size() == 6);
  CHECK(s.timeline[1].provisioning == 1);
  CHECK(s.timeline[2].live == 2);
  CHECK(s.timeline[3].draining == 1);
  CHECK(s.timeline[4].live == 1);
  CHECK(s.timeline[4].draining == 0);
}

TEST_CASE("autoscale rules: the slo signal counts a request exactly at each target as met",
          "[sim][autoscale]") {
  auto spec = spec_of(ScaleSignal::Slo, 0.5, 1);
  SloTargets slo;
  slo.ttft_ms = 100;
  slo.tpot_ms = 10;
  slo.e2e_ms = 1000;
  spec->slo = slo;
  Autoscaler a(spec, 2);
  CHECK(std::isnan(a.take_attainment()));
  // Arrival 0; first token at 100 ms; 11 tokens, the last at 200 ms (10 ms each); out at 1 s.
  const auto request = [](double ttft_ms, double last_ms, double release_ms, int32_t tokens) {
    Request r;
    r.state = RequestState::Released;
    r.spec.arrival = Time();
    r.spec.output_tokens = tokens;
    r.first_token = Time::from_ms(ttft_ms);
    r.last_token = Time::from_ms(last_ms);
    r.release = Time::from_ms(release_ms);
    return r;
  };
  a.note_departure(request(100, 200, 1000, 11));  // every target exactly: met
  CHECK(a.take_attainment() == 1.0);
  a.note_departure(request(100.001, 200, 1000, 11));  // TTFT a microsecond over
  a.note_departure(request(100, 200.02, 1000, 11));   // TPOT over
  a.note_departure(request(100, 200, 1000.001, 11));  // E2E over
  a.note_departure(request(100, 5000, 1000, 1));      // one token: no TPOT
  CHECK(a.take_attainment() == 0.25);
  Request rejected = request(100, 200, 1000, 11);
  rejected.state = RequestState::Rejected;  // counted as left, never as met
  a.note_departure(rejected);
  a.note_departure(request(100, 200, 1000, 11));
  CHECK(a.take_attainment() == 0.5);
}

}  // namespace t_sim_autoscale_rules_test
