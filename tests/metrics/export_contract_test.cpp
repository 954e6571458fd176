// Contracts every --export format keeps (metrics/exports.h, docs/metrics.md#exports), looped
// over export_formats() so that a new format is held to them too: the same text whatever order
// the requests are recorded in, one row or entry per request in id order, finite numbers, and
// zero rates (never a division by a zero duration) for a run that serves nothing.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "metrics/exports.h"
#include "tests/support.h"

namespace t_metrics_export_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Records the requests and steps of a run, to replay them into TokenTimes in any order.
struct Tape final : RequestRecorder, StepObserver {
  std::vector<Request> requests;
  std::vector<StepRecord> steps;
  void record(const Request& r) override { requests.push_back(r); }
  void on_step(const StepRecord& s) override { steps.push_back(s); }
};

struct Ran {
  Tape tape;
  RunOutput out;
};

// Every step lasts 10 ms a sequence; two seats; a prompt of 1000 tokens does not fit the KV.
std::string scenario(const std::string& rows) {
  return trace_scenario(rows, "{kind: linear, per_seq_ms: 10}",
                        "{kind: continuous, max_num_seqs: 2}",
                        "{policy: paged, capacity_tokens: 100, block_size: 1}");
}

void run(Ran& r, const std::string& rows) {
  RunOptions o;
  o.no_requests_csv = true;
  o.step_observers.push_back(&r.tape);
  o.request_recorders.push_back(&r.tape);
  r.out = run_scenario(build_scenario(doc_of(scenario(rows))), o);
}

std::string export_of(const ExportFormat& f, const Ran& r, bool reversed,
                      const std::vector<double>& percentiles = {}) {
  TokenTimes t;
  for (const StepRecord& s : r.tape.steps) t.on_step(s);
  if (reversed)
    for (auto it = r.tape.requests.rbegin(); it != r.tape.requests.rend(); ++it) t.record(*it);
  else
    for (const Request& q : r.tape.requests) t.record(q);
  std::ostringstream out;
  write_export(f, out, r.out.summary, t, percentiles);
  return out.str();
}

/// Every number in `j`, with its path, that is not finite; and the number of nulls.
void walk(const nlohmann::json& j, const std::string& path, std::string& bad, int& nulls) {
  if (j.is_null()) ++nulls;
  if (j.is_number_float() && !std::isfinite(j.get<double>())) bad += " " + path;
  if (j.is_object())
    for (const auto& [k, v] : j.items()) walk(v, path + "." + k, bad, nulls);
  if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i)
      walk(j[i], path + "[" + std::to_string(i) + "]", bad, nulls);
}

// r0 (t=0, 3 tokens), r1 (t=0, 2), r2 (t=0, 1), r3 (prompt 1000: rejected), r4 (t=100 ms, 2):
// the trace of tests/metrics/exports_test.cpp, whose times are worked out there.
const std::string k_rows = "0,1,3\n0,1,2\n0,1,1\n0,1000,1\n0.1,1,2\n";

}  // namespace

TEST_CASE("export contract: the same text whatever order the requests are recorded in",
          "[metrics][contract]") {
  Ran r;
  run(r, k_rows);
  REQUIRE(r.tape.requests.size() == 5);
  // The recorders see requests as they leave: r2 (one token) before r0.
  CHECK(r.tape.requests.front().spec.id != 0);
  for (const ExportFormat& f : export_formats()) {
    INFO(f.name);
    const std::string in_order = export_of(f, r, false, {50});
    CHECK(export_of(f, r, true, {50}) == in_order);
    if (std::string_view(f.file).ends_with(".csv")) {
      // A header and one row per request, in id order.
      std::istringstream lines(in_order);
      std::string line;
      std::getline(lines, line);
      for (int id = 0; id < 5; ++id) {
        REQUIRE(std::getline(lines, line));
        CHECK(line.substr(0, line.find(',')) == std::to_string(id));
      }
      CHECK_FALSE(std::getline(lines, line));
    } else {
      std::string bad;
      int nulls = 0;
      walk(nlohmann::json::parse(in_order), "", bad, nulls);
      CHECK(bad == "");
    }
  }
}

TEST_CASE("export contract: a run that serves nothing has zero rates, not a division by zero",
          "[metrics][contract]") {
  Ran r;
  run(r, "0,1000,1\n0.5,1000,2\n");
  REQUIRE(r.out.summary.finished == 0);
  CHECK(r.out.summary.duration_s == 0);
  for (const ExportFormat& f : export_formats()) {
    INFO(f.name);
    const std::string text = export_of(f, r, false);
    if (std::string_view(f.file).ends_with(".csv")) {
      std::istringstream lines(text);
      std::string line;
      std::getline(lines, line);
      for (int id = 0; id < 2; ++id) {
        REQUIRE(std::getline(lines, line));
        CHECK(line.substr(0, line.find(',')) == std::to_string(id));
      }
      continue;
    }
    const nlohmann::json j = nlohmann::json::parse(text);
    std::string bad;
    int nulls = 0;
    walk(j, "", bad, nulls);
    CHECK(bad == "");
    if (std::string_view(f.name) == "vllm-bench") {
      CHECK(j.at("completed") == 0);
      CHECK(j.at("failed") == 2);
      CHECK(j.at("duration") == 0.0);
      CHECK(j.at("request_throughput") == 0.0);
      CHECK(j.at("output_throughput") == 0.0);
      CHECK(j.at("total_token_throughput") == 0.0);
      CHECK(j.at("request_rate") == 4.0);  // 2 arrivals 0.5 s apart
    }
  }
}

TEST_CASE("export contract: p0 and p100 are the smallest and largest sample",
          "[metrics][contract]") {
  // TTFT {20, 20, 60, 10} ms, E2E {60, 40, 60, 20} ms, ITL {20, 20, 20, 10} ms.
  Ran r;
  run(r, k_rows);
  const ExportFormat& f = export_format("vllm-bench", "--export");
  const nlohmann::json j = nlohmann::json::parse(export_of(f, r, false, {0, 50, 100}));
  CHECK(j.at("p0_ttft_ms").get<double>() == Approx(10));
  CHECK(j.at("p50_ttft_ms").get<double>() == Approx(20));
  CHECK(j.at("p100_ttft_ms").get<double>() == Approx(60));
  CHECK(j.at("p0_e2el_ms").get<double>() == Approx(20));
  CHECK(j.at("p50_e2el_ms").get<double>() == Approx(50));
  CHECK(j.at("p100_e2el_ms").get<double>() == Approx(60));
  CHECK(j.at("p0_itl_ms").get<double>() == Approx(10));
  CHECK(j.at("p100_itl_ms").get<double>() == Approx(20));
}

}  // namespace t_metrics_export_contract_test
