// The autoscaler's books (sim/autoscaler.cpp, sim/autoscale_engine.cpp) against its own
// timeline, for every signal, with and without draining, over several cooldowns: the paid
// replica-seconds are the replicas' paid times summed; the scale-ups and drains are the
// timeline's `up` and `drain` rows; the most replicas paid and live are the timeline's; a
// provisioned replica goes live exactly provision_s after its `up`; decisions come exactly
// window_s apart; two scale events are at least the cooldown apart; every request is served.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "sim/autoscaler.h"
#include "tests/support.h"

namespace t_sim_autoscale_identity_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// 80 requests: a quiet start, a burst of 40 over 0.4 s, a lull, a second smaller burst.
std::string rows() {
  std::string out;
  for (int i = 0; i < 10; ++i) out += fmt::format("{},4,20\n", i * 0.05);
  for (int i = 0; i < 40; ++i) out += fmt::format("{},8,30\n", 0.5 + i * 0.01);
  for (int i = 0; i < 10; ++i) out += fmt::format("{},4,10\n", 1.5 + i * 0.1);
  for (int i = 0; i < 20; ++i) out += fmt::format("{},8,30\n", 3.0 + i * 0.02);
  return out;
}

}  // namespace

TEST_CASE("autoscale identity: the books are the timeline's, and its times are exact",
          "[sim][autoscale][contract]") {
  int64_t runs_up = 0, runs_down = 0;
  for (const char* signal : {"{signal: queue, target: 2", "{signal: utilisation, target: 0.5",
                             "{signal: kv, target: 0.3"}) {
    for (const char* drain : {"true", "false"}) {
      for (const double cooldown : {0.0, 0.15}) {
        const std::string as = fmt::format(
            "{}, window_s: 0.05, min: 1, max: 4, provision_s: 0.12, cooldown_s: {}, drain: {}}}",
            signal, cooldown, drain);
        INFO(as);
        const std::string yaml =
            trace_scenario(rows(), "{kind: linear, base_ms: 5, per_seq_ms: 0.5}",
                           "{kind: continuous, max_num_seqs: 4}",
                           "{policy: paged, capacity_tokens: 400, block_size: 4}") +
            "cluster: {replicas: 1, router: {kind: least_outstanding}, autoscale: " + as + "}\n";
        const CheckedRun run = run_checked(yaml);
        REQUIRE(run.stats.autoscale.has_value());
        const AutoscaleStats& a = *run.stats.autoscale;
        REQUIRE(run.requests.size() == 80);
        for (const Request& r : run.requests) CHECK(r.state == RequestState::Released);
        double held = 0;
        for (double h : a.held_s) held += h;
        CHECK(a.replica_seconds == Approx(held));
        std::map<std::string, int64_t> events;
        uint32_t most_held = 0, most_live = 0;
        std::map<uint32_t, Time> up_at;
        Time last_tick = Time::max(), last_change = Time::max(), prev;
        REQUIRE(!a.timeline.empty());
        for (const AutoscaleRow& r : a.timeline) {
          INFO(r.event << " at " << r.t.count_ns() << " replica " << r.replica);
          CHECK(r.t >= prev);
          prev = r.t;
          ++events[r.event];
          const uint32_t paid = r.live + r.provisioning + r.draining;
          CHECK(paid <= 4);
          most_held = std::max(most_held, paid);
          most_live = std::max(most_live, r.live);
          const std::string e = r.event;
          if (e == "tick") {
            if (last_tick != Time::max()) CHECK((r.t - last_tick).count_ns() == ms(50));
            last_tick = r.t;
          }
          if (e == "up" || e == "drain") {
            if (last_change != Time::max() && r.t != last_change)
              CHECK((r.t - last_change).count_ns() >= ms(cooldown * 1e3));
            last_change = r.t;
          }
          if (e == "up") up_at[r.replica] = r.t;
          if (e == "live" && up_at.count(r.replica)) {
            CHECK((r.t - up_at[r.replica]).count_ns() == ms(120));
            up_at.erase(r.replica);
          }
        }
        CHECK(events["up"] == a.scale_ups);
        CHECK(events["drain"] == a.scale_downs);
        CHECK(events["end"] == 1);
        CHECK(a.timeline.back().t.seconds() == Approx(a.horizon_s));
        CHECK(a.max_held == most_held);
        CHECK(a.max_live == most_live);
        CHECK(a.min_live >= 1);
        runs_up += a.scale_ups > 0;
        runs_down += events["parked"] > 0;
      }
    }
  }
  CHECK(runs_up >= 8);
  CHECK(runs_down >= 4);
}

}  // namespace t_sim_autoscale_identity_test
