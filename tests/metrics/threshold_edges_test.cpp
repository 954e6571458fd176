// Every figure guarded by a threshold (a ratio given only when its denominator is positive, a
// figure only when a count reaches one) checked exactly at the threshold and just below it: a
// count of 0 and of 1, an energy of 0 J and of less than 1 J, a denominator of exactly 1.
#include <catch2/catch.hpp>
#include <vector>

#include "metrics/energy.h"
#include "metrics/trace_stats.h"
#include "tests/support.h"

namespace t_metrics_threshold_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

PowerSpec chip(double idle_w, double peak_w) {
  PowerSpec p;
  p.idle_w = idle_w;
  p.peak_w = peak_w;
  return p;
}

// One replica: `steps` steps (`costed` of them with a cost), busy `busy_ns`, active `active_s`.
RunStats stats(int64_t steps, int64_t costed, int64_t busy_ns, double active_s) {
  RunStats s;
  s.steps = steps;
  s.costed_steps = costed;
  s.replicas.resize(1);
  s.replicas[0].steps = steps;
  s.replicas[0].busy_ns = busy_ns;
  s.replicas[0].active_s = active_s;
  return s;
}

RequestSpec spec(int64_t at_ns, int32_t prompt, std::vector<uint64_t> hashes = {},
                 int32_t block = 0) {
  RequestSpec r;
  r.arrival = Time::ns(at_ns);
  r.prompt_tokens = prompt;
  r.output_tokens = 1;
  r.block_hashes = std::move(hashes);
  r.hash_block_tokens = block;
  return r;
}

}  // namespace

TEST_CASE("threshold edges: energy figures at one request, one token, one step and under 1 J",
          "[metrics][energy]") {
  const std::vector<PowerSpec> power{chip(0.25, 1.25)};
  const std::vector<int64_t> one{1};
  // 0.5 s at 0.25 W idle plus 1 W more over 0.25 active s: 0.125 + 0.25 = 0.375 J.
  const auto e = energy_summary(stats(1, 0, 1, 0.25), power, one, 0.5, 1, 1);
  REQUIRE(e);
  CHECK(e->accelerators == 1);
  CHECK(e->joules == Approx(0.375).epsilon(1e-12));
  CHECK(e->idle_joules == Approx(0.125).epsilon(1e-12));
  CHECK(e->mean_power_w == Approx(0.75).epsilon(1e-12));
  CHECK(e->joules_per_request == Approx(0.375).epsilon(1e-12));
  CHECK(e->joules_per_output_token == Approx(0.375).epsilon(1e-12));
  CHECK(e->output_tokens_per_joule == Approx(1 / 0.375).epsilon(1e-12));
  CHECK(e->busy_activity == Approx(0.25e9).epsilon(1e-12));  // 0.25 active s over 1 ns busy
  CHECK(e->steps_at_peak_share == 1.0);                      // its one step has no cost
  // Nothing finished, no token, no step, no busy time: those figures stay 0.
  const auto z = energy_summary(stats(0, 0, 0, 0), power, one, 0.5, 0, 0);
  REQUIRE(z);
  CHECK(z->joules == Approx(0.125).epsilon(1e-12));
  CHECK(z->joules_per_request == 0);
  CHECK(z->joules_per_output_token == 0);
  CHECK(z->output_tokens_per_joule == 0);
  CHECK(z->busy_activity == 0);
  CHECK(z->steps_at_peak_share == 0);
  // A chip drawing nothing idle and never active: 0 J, so no tokens a joule.
  const std::vector<PowerSpec> off{chip(0, 1)};
  const auto n = energy_summary(stats(1, 1, 1, 0), off, one, 0.5, 1, 1);
  REQUIRE(n);
  CHECK(n->joules == 0);
  CHECK(n->output_tokens_per_joule == 0);
  CHECK(n->steps_at_peak_share == 0);  // its one step has a cost
  // A duration of exactly 0 gives no energy at all; the smallest positive one does.
  CHECK_FALSE(energy_summary(stats(1, 0, 1, 0), power, one, 0.0, 1, 1));
  CHECK(energy_summary(stats(1, 0, 1, 0), power, one, 1e-9, 1, 1));
}

TEST_CASE("threshold edges: trace stats ratios over a denominator of exactly 1",
          "[metrics][trace]") {
  // One request of one prompt token in one hashed block: 1 block, 1 hashed token, no hit.
  TraceStats one(1'000'000'000);
  one.add(spec(0, 1, {7}, 16));
  const auto j = one.figures();
  const auto& p = j.at("prefix_reuse");
  CHECK(p.at("blocks") == 1);
  CHECK(p.at("hashed_tokens") == 1);
  CHECK(p.at("block_hit_rate") == 0.0);
  CHECK(p.at("token_hit_rate") == 0.0);
  CHECK(p.at("hit_fraction_of_prompt_tokens") == 0.0);
  CHECK(j.at("mean_rate_per_s").is_null());  // one arrival: no duration
  CHECK(j.at("gap_mean_s").is_null());
  CHECK(j.at("gap_cv").is_null());
  // Two arrivals 1 ns apart, the second repeating the first's block: half the blocks hit.
  TraceStats two(1'000'000'000);
  two.add(spec(0, 1, {7}, 16));
  two.add(spec(1, 1, {7}, 16));
  const auto k = two.figures();
  CHECK(k.at("mean_rate_per_s").get<double>() == Approx(1e9).epsilon(1e-12));
  CHECK(k.at("gap_mean_s").get<double>() == Approx(1e-9).epsilon(1e-12));
  CHECK(k.at("gap_cv") == 0.0);
  CHECK(k.at("prefix_reuse").at("block_hit_rate") == 0.5);
  CHECK(k.at("prefix_reuse").at("token_hit_rate") == 0.5);
}

}  // namespace t_metrics_threshold_edges_test
