// The engine's random draws keep their documented distributions (docs/admission.md): over 400
// requests the share cancelled is the fraction asked for, a cancellation by tokens falls on 1 to
// output - 1 tokens, uniformly, and a cancellation delay drawn uniform or exponential has its
// range and mean. Bounds are 5 standard deviations wide, so a seed never fails them, but a draw
// on half the unit interval, or one off by a token, does.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support.h"

namespace t_sim_draw_shares_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::vector<Request> run_with(const std::string& abandonment) {
  return run_requests(
      "workload: {synthetic: {requests: 400, arrival: {kind: fixed, rate_per_s: 1000}, "
      "prompt_tokens: {kind: fixed, value: 4}, output_tokens: {kind: fixed, value: 9}}}\n"
      "step_time: {kind: linear, base_ms: 1}\n"
      "scheduler: {kind: continuous, max_num_seqs: 512}\n"
      "kv: {policy: paged, capacity_tokens: 100000, block_size: 16}\n"
      "abandonment: " +
      abandonment + "\n");
}

}  // namespace

TEST_CASE("draw shares: a cancel fraction cancels that share, after 1 to output - 1 tokens",
          "[sim][admission]") {
  const std::vector<Request> r = run_with("{cancel: {fraction: 0.25}}");
  REQUIRE(r.size() == 400);
  int cancelled = 0;
  double tokens = 0;
  int32_t least = 100, most = 0;
  for (const Request& q : r) {
    if (q.spec.cancel_after_tokens == 0) {
      CHECK(q.generated_tokens == 9);
      continue;
    }
    ++cancelled;
    CHECK(q.generated_tokens == q.spec.cancel_after_tokens);
    tokens += q.spec.cancel_after_tokens;
    least = std::min(least, q.spec.cancel_after_tokens);
    most = std::max(most, q.spec.cancel_after_tokens);
  }
  // Binomial(400, 0.25): 100 +- 5 x 8.7.
  CHECK(cancelled >= 57);
  CHECK(cancelled <= 143);
  // Uniform on 1..8: mean 4.5, each value met in ~100 draws.
  CHECK(least == 1);
  CHECK(most == 8);
  CHECK(tokens / cancelled == Approx(4.5).margin(1.2));
}

TEST_CASE("draw shares: cancellation delays drawn uniform or exponential have their mean",
          "[sim][admission]") {
  const auto mean_delay = [](const std::vector<Request>& r, double& lo, double& hi) {
    double sum = 0;
    lo = 1e9;
    hi = 0;
    for (const Request& q : r) {
      const double s = q.spec.cancel_after.seconds();
      sum += s;
      lo = std::min(lo, s);
      hi = std::max(hi, s);
    }
    return sum / static_cast<double>(r.size());
  };
  double lo = 0, hi = 0;
  // Uniform on [0.1, 0.3): mean 0.2, sd of the mean 0.058 / 20.
  const double uniform =
      mean_delay(run_with("{cancel: {fraction: 1, after_s: {kind: uniform, min_s: 0.1, "
                          "max_s: 0.3}}}"),
                 lo, hi);
  CHECK(uniform == Approx(0.2).margin(0.015));
  CHECK(lo >= 0.1);
  CHECK(lo < 0.11);
  CHECK(hi < 0.3);
  CHECK(hi > 0.29);
  // Exponential of mean 0.2: sd of the mean 0.01.
  CHECK(mean_delay(run_with("{cancel: {fraction: 1, after_s: {kind: exponential, mean_s: 0.2}}}"),
                   lo, hi) == Approx(0.2).margin(0.05));
  CHECK(lo > 0);
}

}  // namespace t_sim_draw_shares_test
