// A sweep point's SLO verdict (sizing/sweep.h meets_slo) field by field at exactly one request
// or exactly the attainment asked for, and the sweep's point limit (k_max_sweep_points) at
// exactly its value and one past it.
#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/errors.h"
#include "metrics/metrics.h"
#include "sizing/sweep.h"
#include "tests/support.h"

namespace t_sizing_sweep_verdict_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// A summary whose every target is met by every request: meets_slo says yes.
Summary all_met() {
  Summary s;
  s.slo.emplace();
  s.slo->ttft = SloCheck{};
  s.slo->ttft->met = true;
  s.slo->tpot = SloCheck{};
  s.slo->tpot->met = true;
  s.slo->e2e = SloCheck{};
  s.slo->e2e->met = true;
  s.slo->itl = SloCheck{};
  s.slo->itl->met = true;
  s.slo->attainment = 0.5;
  s.by_status.emplace();
  return s;
}

// Loads a sweep whose axes are `axes` (lines under `axes:`); "" when it loads, else the error.
std::string sweep_error(const std::string& axes) {
  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "base.yaml")
      << "workload: {synthetic: {requests: 4, arrival: {kind: fixed, rate_per_s: 4},\n"
         "  prompt_tokens: {kind: fixed, value: 20}, output_tokens: {kind: fixed, value: 5}}}\n"
         "step_time: {kind: linear, base_ms: 8, per_seq_ms: 2}\n"
         "scheduler: {kind: continuous, max_num_seqs: 8}\n"
         "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n";
  std::ofstream(dir / "s.yaml") << "base: base.yaml\nslo: {ttft_ms: 500}\naxes:\n" << axes;
  try {
    (void)load_sweep((dir / "s.yaml").string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// "  key: [1, 2, ..., n]\n"
std::string axis(const std::string& key, size_t n) {
  std::string out = "  " + key + ": [";
  for (size_t i = 1; i <= n; ++i) out += (i > 1 ? ", " : "") + std::to_string(i);
  return out + "]\n";
}

}  // namespace

TEST_CASE("sweep verdict edges: one request not served or one target missed fails the point",
          "[sizing][size][slo]") {
  CHECK(meets_slo(all_met(), std::nullopt));
  // No slo section: never meets.
  Summary none = all_met();
  none.slo.reset();
  CHECK_FALSE(meets_slo(none, std::nullopt));
  // Each count alone at exactly 1 fails it (0 passes, above).
  for (int k = 0; k < 7; ++k) {
    INFO("count " << k);
    Summary s = all_met();
    if (k == 0) s.rejected = 1;
    if (k == 1) s.unfinished = 1;
    if (k == 2) s.stopped_by = "max_time_s";
    if (k == 3) s.by_status->rejected = 1;
    if (k == 4) s.by_status->shed = 1;
    if (k == 5) s.by_status->timed_out = 1;
    if (k == 6) s.by_status->failed = 1;
    CHECK_FALSE(meets_slo(s, std::nullopt));
  }
  // A cancellation is the client's: the point still meets.
  Summary cancelled = all_met();
  cancelled.by_status->cancelled = 1;
  cancelled.by_status->finished = 3;
  CHECK(meets_slo(cancelled, std::nullopt));
  // Without by_status only the summary's own counts decide.
  Summary no_status = all_met();
  no_status.by_status.reset();
  CHECK(meets_slo(no_status, std::nullopt));
  // Each target missed alone fails it; a target not asked for is not checked.
  for (int k = 0; k < 4; ++k) {
    INFO("target " << k);
    Summary s = all_met();
    std::optional<SloCheck>& c = k == 0   ? s.slo->ttft
                                 : k == 1 ? s.slo->tpot
                                 : k == 2 ? s.slo->e2e
                                          : s.slo->itl;
    c->met = false;
    CHECK_FALSE(meets_slo(s, std::nullopt));
    c.reset();
    CHECK(meets_slo(s, std::nullopt));
  }
  // min_attainment: exactly the attainment passes, a hair more fails.
  CHECK(meets_slo(all_met(), 0.5));
  CHECK(meets_slo(all_met(), 0.0));
  CHECK_FALSE(meets_slo(all_met(), 0.5000001));
  CHECK_FALSE(meets_slo(all_met(), 1.0));
}

TEST_CASE("sweep verdict edges: a sweep of exactly 1,000,000 points loads, 1,000,001 does not",
          "[sizing][size]") {
  REQUIRE(k_max_sweep_points == 1'000'000);
  CHECK(sweep_error(axis("replicas", 100) + axis("tensor_parallel", 100) +
                    axis("pipeline_parallel", 100)) == "");
  // 1,000,001 = 101 x 9,901; the axis that crosses the limit is named.
  const std::string err = sweep_error(axis("replicas", 101) + axis("tensor_parallel", 9901));
  CHECK_THAT(err, Catch::Contains("axes.tensor_parallel") &&
                      Catch::Contains("the sweep has more than 1000000 points"));
}

TEST_CASE("sweep verdict edges: a key's role from its first and last parts exactly",
          "[sizing][roles]") {
  // Scenario: the last part is "rate", starts with "rate_" or holds "_rate"; the first part is
  // workload, slo, seed or abandonment, whole.
  for (const char* k : {"scheduler.rate", "rate", "step_time.rate_x", "kv.x_rate", "x.y.rate",
                        "seed", "slo", "abandonment", "workload.a.b.c"})
    CHECK(inferred_role(k) == AxisRole::Scenario);
  // Deployment: "rate" inside a word, a first part that only starts like workload or seed,
  // an admission rate (the server's choice), a dot before the last part but not in it.
  for (const char* k : {"scheduler.karate", "seeds", "workloads.x", "slo_x", "x.rates",
                        "admission.rate", "admission.x.rate_per_s", "rate.x", "x_rate_.y"})
    CHECK(inferred_role(k) == AxisRole::Deployment);
  CHECK(std::string(role_name(AxisRole::Scenario)) == "scenario");
  CHECK(std::string(role_name(AxisRole::Deployment)) == "deployment");
}

}  // namespace t_sizing_sweep_verdict_edges_test
