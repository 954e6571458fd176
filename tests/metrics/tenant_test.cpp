// Per-tenant figures and Jain's fairness index (metrics/tenants.h, docs/metrics.md#tenants-and-
// fairness): the index and the max-min shares on hand values, and a run's tenants block.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "metrics/metrics.h"
#include "metrics/output.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_metrics_tenant_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("tenants: Jain's index on hand values", "[metrics]") {
  CHECK(jain_index({1, 1, 1}) == 1.0);
  CHECK(jain_index({1, 0, 0}) == Approx(1.0 / 3.0));
  CHECK(jain_index({1, 2, 3}) == Approx(36.0 / 42.0));     // 6^2 / (3 x 14)
  CHECK(jain_index({2, 2, 4, 0}) == Approx(64.0 / 96.0));  // 8^2 / (4 x 24)
  CHECK(jain_index({}) == 1.0);
  CHECK(jain_index({0, 0}) == 1.0);
}

TEST_CASE("tenants: max-min shares fill the smallest demands first", "[metrics]") {
  // 9 among demands 1, 10, 5: 1 is met; the level 4 then caps 5 and 10.
  CHECK(max_min_shares({1, 10, 5}, 9) == std::vector<double>{1, 4, 4});
  // 12 among 1, 10, 5: 1 met, level 5.5 meets 5, 10 gets the 6 left.
  CHECK(max_min_shares({1, 10, 5}, 12) == std::vector<double>{1, 6, 5});
  // More than asked for: each its demand, scaled up in proportion.
  CHECK(max_min_shares({1, 3}, 8) == std::vector<double>{2, 6});
}

TEST_CASE("tenants: a run gives each tenant's figures and the fairness block", "[metrics]") {
  // One seat; step = 2 ms + 1 ms per sequence + 0.5 ms per prefill token. Tenant a sends
  // (t=0, 2, 1) and (t=10 ms, 2, 1); tenant b (t=2 ms, 2, 3) and (t=8 ms, 2, 1).
  // t=0 a0 -> 4 done; t=4 b0 -> 8 token 1, decodes to 11 and 14; t=14 b1 -> 18; t=18 a1 -> 22.
  // a: 4 prompt + 2 output tokens; b: 4 + 4. The window runs from the later first arrival
  // (b's, 2 ms) to the earlier last arrival (b's, 8 ms).
  const auto trace = [](const std::string& name, const std::string& rows) {
    return write_temp(name + ".csv", "arrival_s,prompt_tokens,output_tokens\n" + rows);
  };
  const std::string yaml =
      "workload:\n  mix:\n    components:\n"
      "    - {name: a, tenant: a, trace: {path: " +
      trace("a", "0,2,1\n0.010,2,1\n") +
      "}}\n"
      "    - {name: b, tenant: b, trace: {path: " +
      trace("b", "0.002,2,3\n0.008,2,1\n") +
      "}}\n"
      "step_time: {kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}\n"
      "scheduler: {kind: continuous, max_num_seqs: 1}\n"
      "kv: {policy: paged, capacity_tokens: 1024, block_size: 16}\n";
  const RunOutput out = run_scenario(doc_of(yaml), true);
  const Summary& s = out.summary;
  REQUIRE(s.tenants.size() == 2);
  CHECK(s.tenants[0].first == "a");
  CHECK(s.tenants[0].second.finished == 2);
  CHECK(s.tenants[0].second.prompt_tokens == 4);
  CHECK(s.tenants[0].second.output_tokens == 2);
  CHECK(s.tenants[1].second.output_tokens == 4);
  CHECK(s.tenants[0].second.service_share == Approx(6.0 / 14.0));
  CHECK(s.tenants[1].second.ttft_s.max == Approx(0.010));  // b1: 8 -> 18 ms
  CHECK(s.tenants[0].second.output_tokens_per_s == Approx(2 / 0.022));
  REQUIRE(s.fairness);
  CHECK(s.fairness->window_start_s == Approx(0.002));
  CHECK(s.fairness->window_end_s == Approx(0.008));
  CHECK(s.fairness->tenants == 2);
  // Every token of this run falls in its first second: each tenant's service in the window is
  // its demand there, its fair share, so the index is 1.
  CHECK(s.fairness->jain_index == Approx(1.0));
  const auto j = nlohmann::json::parse(out.summary_json);
  CHECK(j["tenants"]["b"]["finished"] == 2);
  CHECK(j["fairness"]["tenants"] == 2);
  // Every path the report page's per-tenant chart reads (tkey('...') in report/report.js) is in
  // a tenant's entry, or, for fairness.*, in the summary.
  std::ifstream js_file(std::string(SERVESIM_SOURCE_DIR) + "/report/report.js");
  const std::string js((std::istreambuf_iterator<char>(js_file)), std::istreambuf_iterator<char>());
  int paths = 0;
  for (size_t at = js.find("tkey('"); at != std::string::npos; at = js.find("tkey('", at + 1)) {
    const size_t from = at + 6;
    const std::string path = js.substr(from, js.find('\'', from) - from);
    const nlohmann::json* v = path.rfind("fairness.", 0) == 0 ? &j : &j["tenants"]["a"];
    for (size_t p = 0, q; p <= path.size(); p = q + 1) {
      q = std::min(path.find('.', p), path.size());
      const std::string part = path.substr(p, q - p);
      v = v && v->is_object() && v->contains(part) ? &(*v)[part] : nullptr;
    }
    INFO(path);
    CHECK(v != nullptr);
    ++paths;
  }
  CHECK(paths >= 4);
  const std::string table = summary_table(s);
  CHECK_THAT(table, Catch::Contains("tenant     a: 2 finished, 0 rejected;"));
  CHECK_THAT(table, Catch::Contains("fairness   Jain's index 1.000 over 2 tenants"));
}

TEST_CASE("tenants: a workload without tenants has no tenants block", "[metrics]") {
  const std::string path = write_temp("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,2,1\n");
  const RunOutput out = run_scenario(
      doc_of("workload: {trace: {path: " + path +
             "}}\nstep_time: {kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: "
             "0.5}\nscheduler: {kind: continuous, max_num_seqs: 1}\nkv: {policy: paged, "
             "capacity_tokens: 1024, block_size: 16}\n"),
      true);
  CHECK(out.summary.tenants.empty());
  CHECK_FALSE(out.summary.fairness);
  CHECK(out.summary_json.find("\"tenants\"") == std::string::npos);
}

TEST_CASE("tenants: a trace's tenant column names each request's tenant", "[metrics]") {
  const std::string path = write_temp("t.csv",
                                      "arrival_s,prompt_tokens,output_tokens,tenant\n"
                                      "0,2,1,acme\n0,2,2,zeta\n0.001,2,1,acme\n");
  const std::string rest =
      "}}\nstep_time: {kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}\n"
      "scheduler: {kind: continuous, max_num_seqs: 1}\n"
      "kv: {policy: paged, capacity_tokens: 1024, block_size: 16}\n";
  const RunOutput out = run_scenario(doc_of("workload: {trace: {path: " + path + rest), true);
  REQUIRE(out.summary.tenants.size() == 2);
  CHECK(out.summary.tenants[0].first == "acme");
  CHECK(out.summary.tenants[0].second.finished == 2);
  CHECK(out.summary.tenants[1].first == "zeta");
  CHECK(out.summary.tenants[1].second.output_tokens == 2);
  const std::string bad = write_temp("b.csv",
                                     "arrival_s,prompt_tokens,output_tokens,tenant\n"
                                     "0,2,1,acme\n0,2,2,\n");
  CHECK_THAT(input_error_of("workload: {trace: {path: " + bad + rest),
             Catch::Contains("column tenant = \"\": must be 1 to 64 characters") &&
                 Catch::Contains("every row names its tenant"));
}

TEST_CASE("tenants: a mix names every component's tenant or none", "[metrics]") {
  const std::string path = write_temp("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,2,1\n");
  const std::string base = "workload:\n  mix:\n    components:\n";
  const std::string rest =
      "step_time: {kind: linear, base_ms: 2, per_seq_ms: 1, per_prefill_token_ms: 0.5}\n"
      "scheduler: {kind: continuous, max_num_seqs: 1}\n"
      "kv: {policy: paged, capacity_tokens: 1024, block_size: 16}\n";
  CHECK_THAT(input_error_of(base + "    - {name: a, tenant: x, trace: {path: " + path +
                            "}}\n    - {name: b, trace: {path: " + path + "}}\n" + rest),
             Catch::Contains("names no tenant while others do"));
  CHECK_THAT(
      input_error_of(base + "    - {name: a, tenant: 'x y', trace: {path: " + path + "}}\n" + rest),
      Catch::Contains("a tenant name must be 1 to 64 characters"));
  CHECK_THAT(input_error_of(base + "    - {name: a, ttft_slo_ms: 0, trace: {path: " + path +
                            "}}\n" + rest),
             Catch::Contains("ttft_slo_ms"));
}

}  // namespace t_metrics_tenant_test
