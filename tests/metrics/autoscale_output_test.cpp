// The autoscaling outputs (metrics/autoscale_summary.h) on books made by hand: autoscale.csv's
// exact text for every kind of event (only replica events name a replica; the signal empty
// before the first decision), and summary.json's block with and without a price and a horizon.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "metrics/autoscale_summary.h"
#include "sim/autoscaler.h"
#include "tests/support.h"

namespace t_metrics_autoscale_output_test {

using namespace servesim;

namespace {

AutoscaleRow row(int64_t ms, const char* event, double signal, uint32_t replica, uint32_t live,
                 uint32_t provisioning, uint32_t draining) {
  AutoscaleRow r;
  r.t = Time::ns(ms * 1'000'000);
  r.event = event;
  r.signal = signal;
  r.replica = replica;
  r.live = live;
  r.provisioning = provisioning;
  r.draining = draining;
  return r;
}

}  // namespace

TEST_CASE("autoscale output: autoscale.csv names the replica of replica events only",
          "[metrics][autoscale]") {
  AutoscaleStats a;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  a.timeline = {row(0, "start", nan, 3, 1, 0, 0),      row(1500, "tick", 0.8125, 4, 1, 0, 0),
                row(1500, "up", 0.8125, 1, 1, 1, 0),   row(31500, "live", 0.5, 1, 2, 0, 0),
                row(40000, "drain", 0.25, 0, 1, 0, 1), row(41234, "parked", 0.25, 0, 1, 0, 0),
                row(50000, "end", 1e-7, 2, 1, 0, 0)};
  CHECK(autoscale_csv(a) ==
        "time_s,event,replica,signal,live,provisioning,draining,paid\n"
        "0.000,start,,,1,0,0,1\n"
        "1.500,tick,,0.8125,1,0,0,1\n"
        "1.500,up,1,0.8125,1,1,0,2\n"
        "31.500,live,1,0.5,2,0,0,2\n"
        "40.000,drain,0,0.25,1,0,1,2\n"
        "41.234,parked,0,0.25,1,0,0,1\n"
        "50.000,end,,1e-07,1,0,0,1\n");
}

TEST_CASE("autoscale output: the summary block's hours, price and means", "[metrics][autoscale]") {
  auto spec = std::make_shared<AutoscaleSpec>();
  spec->target = 0.7;
  spec->min = 1;
  spec->max = 4;
  spec->accelerators_per_replica = 8;
  AutoscaleStats a;
  a.spec = spec;
  a.horizon_s = 7200;
  a.replica_seconds = 18000;  // 5 replica-hours over 2 hours
  a.scale_ups = 3;
  a.scale_downs = 2;
  a.min_held = 1;
  a.max_held = 4;
  a.min_live = 1;
  a.max_live = 3;
  AutoscaleSummary s = autoscale_summary(a);
  CHECK(s.target == 0.7);
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.horizon_s == 7200);
  CHECK(s.replica_hours == 5);
  CHECK(s.accelerator_hours == 40);
  CHECK_FALSE(s.usd);  // no price
  CHECK_FALSE(s.usd_per_replica_hour);
  CHECK(s.price_tier.empty());
  CHECK(s.scale_ups == 3);
  CHECK(s.scale_downs == 2);
  CHECK(s.min_replicas == 1);
  CHECK(s.max_replicas == 4);
  CHECK(s.mean_replicas == 2.5);
  CHECK(s.min_live == 1);
  CHECK(s.max_live == 3);
  // A price: the hours times it. A horizon of 0: a mean of 0, not a division by it.
  spec->usd_per_replica_hour = 12.5;
  spec->price_tier = "on_demand";
  a.horizon_s = 0;
  s = autoscale_summary(a);
  REQUIRE(s.usd);
  CHECK(*s.usd == 62.5);
  CHECK(s.usd_per_replica_hour == std::optional<double>(12.5));
  CHECK(s.price_tier == "on_demand");
  CHECK(s.mean_replicas == 0);
}

}  // namespace t_metrics_autoscale_output_test
