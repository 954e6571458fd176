// timeline.json (servesim run --timeline, sim/timeline.cpp): a Chrome trace that nlohmann-json
// parses, with exact microsecond times and request phases nested in their request's span.
#include "metrics/timeline.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support.h"

using namespace servesim;
using namespace servesim::test;
using nlohmann::json;

namespace {

// Two requests 5 ms apart, 10 ms steps, 3 output tokens each (worked in steps_csv_test.cpp):
// A: prefill [0,10) ms, decodes [10,20) and [20,30): first token 10 ms, finish 30 ms.
// B: arrives 5 ms, waits for the step at 10 ms, prefill [10,20), decodes to 40 ms.
const std::string k_two_requests =
    "workload: {synthetic: {requests: 2, arrival: {kind: fixed, rate_per_s: 200},\n"
    "  prompt_tokens: {kind: fixed, value: 32}, output_tokens: {kind: fixed, value: 3}}}\n"
    "step_time: {kind: linear, base_ms: 10}\n"
    "scheduler: {kind: continuous, max_num_seqs: 8}\n"
    "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n";

json timeline_of(const std::string& yaml, uint64_t max_requests) {
  std::ostringstream text;
  TimelineWriter w(text, max_requests);
  RunOptions o;
  o.step_observers.push_back(&w);
  o.request_recorders.push_back(&w);
  (void)run_scenario(doc_of(yaml), o);
  w.finish();
  return json::parse(text.str());  // throws (and fails the test) if not valid JSON
}

// name -> [ts, ts + dur] of request `tid`'s complete events.
std::map<std::string, std::pair<double, double>> spans_of(const json& t, int tid) {
  std::map<std::string, std::pair<double, double>> out;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 2 && e["tid"] == tid)
      out[e["name"]] = {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()};
  return out;
}

}  // namespace

TEST_CASE("timeline: steps and request phases in microseconds, worked by hand",
          "[metrics][timeline]") {
  const json t = timeline_of(k_two_requests, 1000);
  REQUIRE(t["traceEvents"].is_array());
  std::vector<json> steps;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 1) steps.push_back(e);
  REQUIRE(steps.size() == 4);
  CHECK(steps[0]["name"] == "step 0: 1 prefill / 0 decode");
  CHECK(steps[1]["name"] == "step 1: 1 prefill / 1 decode");
  CHECK(steps[3]["name"] == "step 3: 0 prefill / 1 decode");
  CHECK(steps[1]["ts"] == 10000.0);  // 10 ms
  CHECK(steps[1]["dur"] == 10000.0);
  CHECK(steps[1]["args"]["running"] == 2);

  const auto a = spans_of(t, 0);
  CHECK(a.at("request 0") == std::make_pair(0.0, 30000.0));
  CHECK(a.count("queued") == 0);  // admitted on arrival: an empty span is left out
  CHECK(a.at("prefill") == std::make_pair(0.0, 10000.0));
  CHECK(a.at("decode") == std::make_pair(10000.0, 30000.0));
  const auto b = spans_of(t, 1);
  CHECK(b.at("request 1") == std::make_pair(5000.0, 40000.0));
  CHECK(b.at("queued") == std::make_pair(5000.0, 10000.0));
  CHECK(b.at("prefill") == std::make_pair(10000.0, 20000.0));
  CHECK(b.at("decode") == std::make_pair(20000.0, 40000.0));
}

TEST_CASE("timeline: phases nest in their request, tracks are named, the cap holds",
          "[metrics][timeline]") {
  // Static batching with preemption-free paged KV: replies wait for their batch ("batch wait").
  const std::string yaml =
      "workload: {synthetic: {requests: 60, arrival: {kind: poisson, rate_per_s: 30},\n"
      "  prompt_tokens: {kind: uniform, min: 16, max: 300},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 40}}}\n"
      "step_time: {kind: linear, base_ms: 8, per_prefill_token_ms: 0.02}\n"
      "scheduler: {kind: static, max_batch_size: 4}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 100000}\n";
  const json t = timeline_of(yaml, 20);
  // Compared in integer nanoseconds: ts + dur in doubles can miss the next ts by an ulp.
  auto ns = [](const json& us) { return std::llround(us.get<double>() * 1000); };
  std::map<int, std::pair<int64_t, int64_t>> outer;
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> inner;
  std::map<int, std::string> names;
  bool batch_wait = false;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 2)
      names[e["tid"]] = e["args"]["name"];
    if (e["ph"] != "X" || e["pid"] != 2) continue;
    const int tid = e["tid"];
    const int64_t from = ns(e["ts"]), to = from + ns(e["dur"]);
    CHECK(e["dur"].get<double>() > 0);
    if (e["name"].get<std::string>().rfind("request ", 0) == 0)
      outer[tid] = {from, to};
    else
      inner[tid].push_back({from, to});
    batch_wait = batch_wait || e["name"] == "batch wait";
  }
  CHECK(outer.size() == 20);  // ids 0..19 only
  CHECK(outer.rbegin()->first == 19);
  CHECK(names.size() == 20);
  CHECK(names[7] == "request 7");
  CHECK(batch_wait);
  for (const auto& [tid, spans] : inner) {
    REQUIRE(outer.count(tid) == 1);
    int64_t last_end = outer[tid].first;
    for (const auto& [from, to] : spans) {  // in order, back to back, inside the request
      CHECK(from == last_end);
      CHECK(to <= outer[tid].second);
      last_end = to;
    }
    CHECK(last_end == outer[tid].second);
  }
}

TEST_CASE("timeline: servesim run --timeline writes a file that parses", "[metrics][timeline]") {
  const auto dir = temp_dir() / "out";
  const std::string config = write_temp("two.yaml", k_two_requests);
  std::ostringstream out, err;
  REQUIRE(run_cli({"run", config, "--out", dir.string(), "--timeline", "--timeline-requests", "1"},
                  out, err) == 0);
  CHECK_THAT(out.str(), Catch::Contains("/timeline.json"));
  std::ifstream in(dir / "timeline.json");
  const json t = json::parse(in);
  CHECK(spans_of(t, 0).size() == 3);  // request 0, prefill, decode
  CHECK(spans_of(t, 1).empty());      // past --timeline-requests 1
  CHECK(t["displayTimeUnit"] == "ms");
}
