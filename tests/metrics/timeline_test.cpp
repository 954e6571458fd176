// timeline.json (servesim run --timeline, sim/timeline.cpp): a Chrome trace that nlohmann-json
// parses, with exact microsecond times and request phases nested in their request's span.
#include "metrics/timeline.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support.h"

namespace t_metrics_timeline_test {

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

/// The timeline.json text of a run of `yaml`.
std::string timeline_text_of(const std::string& yaml, uint64_t max_requests) {
  std::ostringstream text;
  TimelineWriter w(text, max_requests);
  RunOptions o;
  o.step_observers.push_back(&w);
  o.request_recorders.push_back(&w);
  (void)run_scenario(doc_of(yaml), o);
  w.finish();
  return text.str();
}

json timeline_of(const std::string& yaml, uint64_t max_requests) {
  // Throws (and fails the test) if not valid JSON.
  return json::parse(timeline_text_of(yaml, max_requests));
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

TEST_CASE("timeline: times are written as exact microseconds, 0 without a sign",
          "[metrics][timeline]") {
  const std::string text = timeline_text_of(k_two_requests, 1000);
  // The first step starts at 0 and lasts 10 ms; the second starts at 10 ms.
  CHECK(text.find("\"ts\":0.000,\"dur\":10000.000") != std::string::npos);
  CHECK(text.find("\"ts\":10000.000,") != std::string::npos);
  CHECK(text.find("-0.000") == std::string::npos);
}

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

TEST_CASE("timeline: counter tracks of each replica's KV use and queue, worked by hand",
          "[metrics][timeline]") {
  // k_two_requests, 16-token blocks. Step 0 (0 ms): A's 32-token prompt, 2 blocks = 32 tokens.
  // Step 1 (10 ms): B's prompt (32) and A's first decode (33 tokens: 3 blocks = 48): 80.
  // Step 2 (20 ms): A at 34 and B at 33 tokens, 3 blocks each: 96. Step 3 (30 ms): A left at
  // 30 ms, B at 34 tokens: 48. Running: 1, 2, 2, 1; nothing waits at a step's start (B,
  // arrived at 5 ms, is admitted by the step at 10 ms).
  const json t = timeline_of(k_two_requests, 1000);
  std::vector<double> kv_ts, kv, waiting, running;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] != "C") continue;
    CHECK(e["pid"] == 1);
    if (e["name"] == "KV replica 0") {
      kv_ts.push_back(e["ts"].get<double>());
      kv.push_back(e["args"]["used_tokens"].get<double>());
    } else if (e["name"] == "queue replica 0") {
      waiting.push_back(e["args"]["waiting"].get<double>());
      running.push_back(e["args"]["running"].get<double>());
    } else {
      FAIL("unexpected counter " << e["name"]);
    }
  }
  CHECK(kv_ts == std::vector<double>{0, 10000, 20000, 30000});
  CHECK(kv == std::vector<double>{32, 80, 96, 48});
  CHECK(running == std::vector<double>{1, 2, 2, 1});
  CHECK(waiting == std::vector<double>{0, 0, 0, 0});
}

TEST_CASE("timeline: a disaggregated run has pool names and KV-transfer slices",
          "[metrics][timeline]") {
  // tests/sim/disagg_test.cpp's first case: the prefill ends at 10 ms; 1000 prompt tokens x
  // 1000 bytes on a 1 GB/s link with 20 us latency arrive 1.02 ms later, at 11.02 ms, and the
  // idle decode replica takes them at once (no admit wait). Request 1 (1 s later) is past
  // --timeline-requests 1: no slices of its own.
  const std::string yaml =
      "workload: {trace: {path: " +
      write_temp("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,1000,5\n1,1000,5\n") +
      "}}\n"
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n"
      "cluster:\n  router: {kind: round_robin}\n  decode_router: {kind: round_robin}\n"
      "  pools:\n    - {name: pre, role: prefill, replicas: 1}\n"
      "    - {name: dec, role: decode, replicas: 1}\n"
      "  kv_transfer: {bandwidth_gb_s: 1, latency_us: 20, kv_bytes_per_token: 1000}\n";
  const json t = timeline_of(yaml, 1);
  std::map<int, std::string> replica_names;
  std::string process3;
  std::vector<json> async;
  std::vector<json> request_slices;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1)
      replica_names[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 3)
      process3 = e["args"]["name"];
    if (e["ph"] == "b" || e["ph"] == "e") async.push_back(e);
    if (e["ph"] == "X" && e["pid"] == 2 && e["name"] == "kv transfer") request_slices.push_back(e);
  }
  CHECK(replica_names[0] == "replica 0 (pool pre, prefill)");
  CHECK(replica_names[1] == "replica 1 (pool dec, decode)");
  CHECK(process3 == "kv transfers");
  REQUIRE(async.size() == 2);  // request 0's transfer, begin and end; no admit wait
  CHECK(async[0]["ph"] == "b");
  CHECK(async[0]["name"] == "kv transfer 0");
  CHECK(async[0]["cat"] == "kv_transfer");
  CHECK(async[0]["id"] == 0);
  CHECK(async[0]["ts"].get<double>() == 10000.0);
  CHECK(async[0]["args"]["from"] == 0);
  CHECK(async[0]["args"]["to"] == 1);
  CHECK(async[1]["ph"] == "e");
  CHECK(async[1]["name"] == "kv transfer 0");
  CHECK(async[1]["ts"].get<double>() == 11020.0);
  REQUIRE(request_slices.size() == 1);
  CHECK(request_slices[0]["tid"] == 0);
  CHECK(request_slices[0]["ts"].get<double>() == 10000.0);
  CHECK(request_slices[0]["dur"].get<double>() == 1020.0);
  // Inside request 0's decode span, which runs from its first token to its last step's end.
  const auto spans = spans_of(t, 0);
  CHECK(spans.at("decode").first <= 10000.0);
  CHECK(spans.at("decode").second >= 11020.0);
  // Both replicas' counters are there (decode steps from 11.02 ms).
  bool decode_kv = false;
  for (const json& e : t["traceEvents"])
    decode_kv = decode_kv ||
                (e["ph"] == "C" && e["name"] == "KV replica 1" && e["ts"].get<double>() == 11020.0);
  CHECK(decode_kv);
}

TEST_CASE("timeline: a decode replica without a free seat shows the admit wait",
          "[metrics][timeline]") {
  // One seat per replica. Two 1,000-token prompts at 0: r0's prefill ends at 10 ms, its KV
  // arrives at 11.02 ms and the decode replica takes it at once; its 4 decode steps end at
  // 51.02 ms. r1 prefills 10-20 ms, its KV arrives at 21.02 ms and waits for r0's seat until
  // 51.02 ms: an admit wait of 30 ms, on the transfers' track and inside r1's decode span.
  const std::string yaml =
      "workload: {trace: {path: " +
      write_temp("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,1000,5\n0,1000,5\n") +
      "}}\n"
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 1}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n"
      "cluster:\n  router: {kind: round_robin}\n  decode_router: {kind: round_robin}\n"
      "  pools:\n    - {name: pre, role: prefill, replicas: 1}\n"
      "    - {name: dec, role: decode, replicas: 1}\n"
      "  kv_transfer: {bandwidth_gb_s: 1, latency_us: 20, kv_bytes_per_token: 1000}\n";
  const json t = timeline_of(yaml, 1000);
  std::map<std::string, std::pair<double, double>> async;  // name -> (begin, end)
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "b") async[e["name"]].first = e["ts"].get<double>();
    if (e["ph"] == "e") async[e["name"]].second = e["ts"].get<double>();
  }
  CHECK(async.size() == 3);  // no admit wait for r0
  CHECK(async.at("kv transfer 0") == std::make_pair(10000.0, 11020.0));
  CHECK(async.at("kv transfer 1") == std::make_pair(20000.0, 21020.0));
  CHECK(async.at("admit wait 1") == std::make_pair(21020.0, 51020.0));
  const auto r1 = spans_of(t, 1);
  CHECK(r1.at("admit wait") == std::make_pair(21020.0, 51020.0));
  CHECK(r1.at("decode") == std::make_pair(20000.0, 91020.0));
  CHECK(spans_of(t, 0).count("admit wait") == 0);
}

}  // namespace t_metrics_timeline_test
