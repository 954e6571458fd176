// Streaming results: bounded-memory percentiles, requests.csv written in id order as requests
// leave, request slots recycled so memory follows the load rather than the trace's length.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/quantiles.h"
#include "core/random.h"
#include "metrics/metrics.h"
#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_streaming_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

std::vector<double> lognormal_values(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (double& x : v) x = 0.02 * std::exp(1.5 * rng.normal());
  return v;
}

double exact_percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return percentile(v, p);
}

}  // namespace

TEST_CASE("quantiles: below the exact limit percentiles are numpy's", "[metrics][streaming]") {
  const std::vector<double> v = lognormal_values(5001, 7);
  QuantileSketch q(10000);
  for (double x : v) q.add(x);
  CHECK(q.exact());
  for (double p : {0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 100.0})
    CHECK(q.percentile(p) == exact_percentile(v, p));
  CHECK(q.max() == *std::max_element(v.begin(), v.end()));
}

TEST_CASE("quantiles: past the limit percentiles stay within the stated relative error",
          "[metrics][streaming]") {
  const std::vector<double> v = lognormal_values(200000, 11);
  QuantileSketch q(1000);  // forces the histogram after 1,000 values
  double sum = 0;
  for (double x : v) {
    q.add(x);
    sum += x;
  }
  CHECK_FALSE(q.exact());
  CHECK(q.count() == 200000);
  CHECK(q.mean() == sum / 200000.0);  // mean and max stay exact
  CHECK(q.max() == *std::max_element(v.begin(), v.end()));
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9}) {
    const double exact = exact_percentile(v, p);
    INFO("p" << p << ": sketch " << q.percentile(p) << " exact " << exact);
    // Interpolating between two neighbouring order statistics can add at most the same bound.
    CHECK(std::abs(q.percentile(p) - exact) <= 2 * QuantileSketch::k_relative_error * exact);
  }
  CHECK(q.percentile(100) == q.max());
}

TEST_CASE("requests.csv: rows come out in id order whatever order requests leave in",
          "[metrics][streaming]") {
  auto req = [](uint64_t id) {
    Request r;
    r.spec.id = id;
    r.spec.prompt_tokens = 1;
    r.spec.output_tokens = 1;
    r.state = RequestState::Rejected;
    r.reject_reason = fmt::format("r{}", id);
    return r;
  };
  std::ostringstream out;
  RequestsCsvWriter w(out);
  for (uint64_t id : {2, 0, 4, 1}) w.record(req(id));
  // 0, 1, 2 are out; 4 waits for 3, which never comes (a bounded run): finish() writes it.
  const std::string so_far = out.str();
  CHECK(std::count(so_far.begin(), so_far.end(), '\n') <= 1);  // buffered, maybe flushed
  w.finish();
  const std::string csv = out.str();
  const size_t p0 = csv.find("\"r0\""), p1 = csv.find("\"r1\""), p2 = csv.find("\"r2\""),
               p4 = csv.find("\"r4\"");
  REQUIRE(p4 != std::string::npos);
  CHECK((p0 < p1 && p1 < p2 && p2 < p4));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
}

TEST_CASE("streaming: slots are recycled, so requests held follow the load, not the count",
          "[metrics][streaming]") {
  // 20,000 requests at a light load: at most a handful are ever in flight.
  const std::string yaml = R"(
workload:
  synthetic:
    requests: 20000
    arrival: {kind: poisson, rate_per_s: 20}
    prompt_tokens: {kind: uniform, min: 16, max: 256}
    output_tokens: {kind: uniform, min: 1, max: 64}
step_time: {kind: linear, base_ms: 5, per_seq_ms: 0.1, per_prefill_token_ms: 0.01}
scheduler: {kind: continuous, max_num_seqs: 32}
kv: {policy: paged, capacity_tokens: 20000}
)";
  const RunOutput out = run_scenario(doc_of(yaml), /*check=*/true);
  CHECK(out.summary.finished == 20000);
  CHECK(out.summary.peak_in_flight < 100);
  // The streamed file has every request, in id order, and matches the rows of the same
  // requests written in one go.
  Scenario sc = build_scenario(doc_of(yaml));
  Simulation sim(std::move(sc.components), /*check=*/true);
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  CHECK(out.requests_csv == requests_csv(rec.by_id()));
  std::istringstream lines(out.requests_csv);
  std::string line;
  std::getline(lines, line);
  for (uint64_t id = 0; std::getline(lines, line); ++id)
    REQUIRE(line.substr(0, line.find(',')) == std::to_string(id));
}

TEST_CASE("cli: --no-requests-csv writes the summary alone", "[metrics][streaming][cli]") {
  const auto dir = temp_dir();
  REQUIRE(cli({"run", "--out", dir.string(), "--quiet"}).code == 0);
  REQUIRE(fs::exists(dir / "requests.csv"));
  const CliResult r = cli({"run", "--out", dir.string(), "--no-requests-csv"});
  REQUIRE(r.code == 0);
  CHECK(fs::exists(dir / "summary.json"));
  CHECK_FALSE(fs::exists(dir / "requests.csv"));  // the earlier run's is gone, not mismatched
  CHECK_THAT(r.out, Catch::Contains("wrote " + dir.string() + "/summary.json\n"));
}

TEST_CASE("cli: a trace error found while streaming leaves no output behind",
          "[metrics][streaming][cli]") {
  std::string rows;
  for (int i = 0; i < 5000; ++i) rows += std::to_string(i * 0.01) + ",10,5\n";
  rows += "60,10,x\n";
  const std::string trace =
      write_temp("late-error.csv", "arrival_s,prompt_tokens,output_tokens\n" + rows);
  const std::string config = write_temp(
      "c.yaml", "workload: {trace: {path: " + trace +
                    "}}\nstep_time: {kind: linear, base_ms: 1}\nscheduler: {kind: continuous, "
                    "max_num_seqs: 8}\nkv: {policy: paged, capacity_tokens: 10000}\n");
  const fs::path dir = temp_dir() / "never";
  const CliResult r = cli({"run", config, "--out", dir.string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("late-error.csv:5002"));
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("summary: what a workload transform dropped or capped is counted in summary.json",
          "[metrics][cli]") {
  const auto dir = temp_dir();
  const CliResult r = cli({"run", "--out", dir.string(), "--set",
                           "workload.transform={max_context_tokens: 100, sample_fraction: 0.5}"});
  REQUIRE(r.code == 0);
  std::ifstream in(dir / "summary.json");
  const std::string summary((std::istreambuf_iterator<char>(in)), {});
  CHECK_THAT(summary, Catch::Contains("\"workload_counters\": {"));
  CHECK_THAT(summary, Catch::Contains("\"transform_capped_context_tokens\": "));
  CHECK_THAT(summary, Catch::Contains("\"transform_dropped_sample\": "));
  CHECK_THAT(r.out, Catch::Contains("workload   transform_dropped_sample: "));
}

}  // namespace t_metrics_streaming_test
