// run_cost_json (sizing/run_cost.h) on summaries written by hand, one key at a time: where the
// hardware name comes from (step_time, else kv.memory; none, a path or an unknown name: no
// cost), how the accelerators are counted (slo.accelerators; else step_time's tensor x data
// parallelism, else kv.memory's tensor parallelism, times the replicas; a count that is not a
// positive integer counts as absent) and the tokens a dollar. h100-sxm costs 4.76 USD an hour
// on demand (configs/hardware/h100-sxm.yaml).
#include <catch2/catch.hpp>

#include "sizing/run_cost.h"

namespace t_sizing_run_cost_keys_test {

using namespace servesim;
using json = nlohmann::json;

namespace {

json summary(const json& config, const json& extra = json::object()) {
  json s = {{"config", config}};
  for (const auto& [k, v] : extra.items()) s[k] = v;
  return s;
}

int64_t accelerators(const json& config, const json& extra = json::object()) {
  const json c = run_cost_json(summary(config, extra));
  REQUIRE(c.is_object());
  return c["accelerators"].get<int64_t>();
}

}  // namespace

TEST_CASE("run cost keys: the hardware from step_time, else kv.memory, else no cost",
          "[sizing][cost]") {
  const json st = {{"step_time", {{"hardware", "h100-sxm"}}}};
  CHECK(run_cost_json(summary(st))["hardware"] == "h100-sxm");
  const json mem = {{"kv", {{"memory", {{"hardware", "h100-sxm"}}}}}};
  const json c = run_cost_json(summary(mem));
  REQUIRE(c.is_object());
  CHECK(c["hardware"] == "h100-sxm");
  CHECK(c["accelerators"] == 1);
  CHECK(c["usd_per_hour"].get<double>() == Approx(4.76));
  CHECK(c["tokens_per_usd"].is_null());  // no output_tokens_per_s
  // step_time's name wins over kv.memory's.
  json both = mem;
  both["step_time"] = {{"hardware", "mi300x"}};
  CHECK(run_cost_json(summary(both))["hardware"] == "mi300x");
  // A path, an empty or unknown name, a name that is not a string: no cost.
  for (const json& hw :
       {json("configs/hardware/h100-sxm.yaml"), json(""), json("no-such-gpu"), json(7)})
    CHECK(run_cost_json(summary({{"step_time", {{"hardware", hw}}}})).is_null());
  // Pools price themselves elsewhere: no cost for the run as a whole.
  json pools = st;
  pools["cluster"] = {{"pools", json::array({json::object()})}};
  CHECK(run_cost_json(summary(pools)).is_null());
}

TEST_CASE("run cost keys: accelerators from slo, else parallelism times replicas",
          "[sizing][cost]") {
  const json hw = {{"hardware", "h100-sxm"}};
  json st = {{"step_time", hw}};
  CHECK(accelerators(st) == 1);
  st["step_time"]["tensor_parallel"] = 2;
  CHECK(accelerators(st) == 2);
  st["step_time"]["data_parallel"] = 3;
  CHECK(accelerators(st) == 6);
  st["cluster"] = {{"replicas", 4}};
  CHECK(accelerators(st) == 24);
  // data_parallel alone; a count of 0 or a non-integer counts as 1.
  json dp = {{"step_time", {{"hardware", "h100-sxm"}, {"data_parallel", 5}}}};
  CHECK(accelerators(dp) == 5);
  dp["step_time"]["tensor_parallel"] = 0;
  CHECK(accelerators(dp) == 5);
  dp["step_time"]["tensor_parallel"] = 1.5;
  CHECK(accelerators(dp) == 5);
  // Without step_time parallelism, kv.memory's tensor_parallel.
  json mem = {{"step_time", hw}, {"kv", {{"memory", {{"tensor_parallel", 4}}}}}};
  CHECK(accelerators(mem) == 4);
  mem["cluster"] = {{"replicas", 2}};
  CHECK(accelerators(mem) == 8);
  // step_time's parallelism, when given, replaces kv.memory's.
  mem["step_time"]["tensor_parallel"] = 1;
  CHECK(accelerators(mem) == 2);
  // slo.accelerators is what the run stands for; 0 is no count.
  CHECK(accelerators(mem, {{"slo", {{"accelerators", 3}}}}) == 3);
  CHECK(accelerators(mem, {{"slo", {{"accelerators", 0}}}}) == 2);
}

TEST_CASE("run cost keys: tokens a dollar are output tokens an hour over the price",
          "[sizing][cost]") {
  const json st = {{"step_time", {{"hardware", "h100-sxm"}, {"tensor_parallel", 2}}}};
  const json c = run_cost_json(summary(st, {{"output_tokens_per_s", 952.0}}));
  REQUIRE(c.is_object());
  CHECK(c["usd_per_accelerator_hour"] == 4.76);
  CHECK(c["usd_per_hour"].get<double>() == Approx(9.52));
  // 952 tokens/s x 3600 s / 9.52 USD = 360,000 tokens a dollar.
  CHECK(c["tokens_per_usd"].get<double>() == Approx(360000).epsilon(1e-12));
  CHECK(run_cost_json(summary(st, {{"output_tokens_per_s", "fast"}}))["tokens_per_usd"].is_null());
}

TEST_CASE("run cost keys: an autoscaled run pays for its mean accelerators over a positive horizon",
          "[sizing][cost]") {
  const json st = {{"step_time", {{"hardware", "h100-sxm"}, {"tensor_parallel", 2}}}};
  auto per_hour = [&](const json& autoscale) {
    const json c = run_cost_json(summary(st, {{"autoscale", autoscale}}));
    REQUIRE(c.is_object());
    return c["usd_per_hour"].get<double>();
  };
  // 3 accelerator-hours over 2 hours: 1.5 accelerators on average.
  CHECK(per_hour({{"accelerator_hours", 3.0}, {"horizon_s", 7200.0}}) == Approx(1.5 * 4.76));
  // A horizon under a second still counts: 0.001 accelerator-hours over 0.5 s.
  CHECK(per_hour({{"accelerator_hours", 0.001}, {"horizon_s", 0.5}}) ==
        Approx(4.76 * 0.001 * 3600 / 0.5));
  // A horizon of 0 or missing figures: the run's accelerators, 2.
  CHECK(per_hour({{"accelerator_hours", 3.0}, {"horizon_s", 0.0}}) == Approx(2 * 4.76));
  CHECK(per_hour({{"accelerator_hours", 3.0}}) == Approx(2 * 4.76));
  CHECK(per_hour({{"horizon_s", 7200.0}}) == Approx(2 * 4.76));
  CHECK(per_hour({{"accelerator_hours", "x"}, {"horizon_s", 7200.0}}) == Approx(2 * 4.76));
  CHECK(per_hour({{"accelerator_hours", 3.0}, {"horizon_s", "x"}}) == Approx(2 * 4.76));
  // Tokens a dollar need a positive price: none when nothing was paid for, set when under 1 USD.
  const json free = run_cost_json(
      summary(st, {{"output_tokens_per_s", 100.0},
                   {"autoscale", {{"accelerator_hours", 0.0}, {"horizon_s", 3600.0}}}}));
  CHECK(free["usd_per_hour"] == 0.0);
  CHECK(free["tokens_per_usd"].is_null());
  const json cheap = run_cost_json(
      summary(st, {{"output_tokens_per_s", 100.0},
                   {"autoscale", {{"accelerator_hours", 0.1}, {"horizon_s", 3600.0}}}}));
  CHECK(cheap["usd_per_hour"].get<double>() == Approx(0.476));
  CHECK(cheap["tokens_per_usd"].get<double>() == Approx(100.0 * 3600 / 0.476).epsilon(1e-12));
}

}  // namespace t_sizing_run_cost_keys_test
