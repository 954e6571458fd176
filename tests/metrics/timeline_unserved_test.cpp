// timeline.json's requests that were not served to the end (docs/report.md#timelines-timeline):
// a rejected request is an instant event at its arrival, one that timed out an instant at the
// moment it left, and one a bounded run left unserved keeps the phases it started and ends in an
// instant `unfinished` once the last step it saw started has ended. Worked by hand.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "metrics/timeline.h"
#include "tests/support.h"

namespace t_metrics_timeline_unserved_test {

using namespace servesim;
using namespace servesim::test;
using nlohmann::json;

TEST_CASE("timeline: rejected, timed-out and unfinished requests, each at its own instant",
          "[metrics][timeline]") {
  // One seat, 10 ms a step, 4,096 KV tokens, timeout_s 0.015 while queued; the run stops at 45 ms.
  //   r0 (t=0, 32 + 3 tokens): runs [0, 30 ms).
  //   r1 (t=2 ms, 5,000-token prompt): never fits the KV, rejected at its arrival, 2 ms.
  //   r2 (t=4 ms): waits behind r0 and times out at 4 + 15 = 19 ms.
  //   r3 (t=28 ms): admitted at 30 ms, prefill [30, 40), decode step [40, 50) in flight when the
  //   run stops at 45 ms: unfinished, its instant at that step's end, 50 ms.
  const std::string yaml =
      trace_scenario("0,32,3\n0.002,5000,3\n0.004,32,3\n0.028,32,3\n",
                     "{kind: linear, base_ms: 10}", "{kind: continuous, max_num_seqs: 1}",
                     "{policy: paged, block_size: 16, capacity_tokens: 4096}") +
      "abandonment: {timeout_s: 0.015}\n";
  std::ostringstream text;
  TimelineWriter w(text, 1000);
  RunOptions o;
  o.check = true;
  o.limits.max_sim_time = Time::ns(45'000'000);
  o.step_observers.push_back(&w);
  o.request_recorders.push_back(&w);
  (void)run_scenario(doc_of(yaml), o);
  w.finish();
  const json t = json::parse(text.str());
  std::map<int, json> instant;                      // request -> its instant event
  std::map<int, std::map<std::string, json>> span;  // request -> phase -> its slice
  for (const json& e : t["traceEvents"]) {
    if (e["pid"] != 2) continue;
    if (e["ph"] == "i") {
      CHECK(instant.count(e["tid"].get<int>()) == 0);  // one a request
      instant[e["tid"].get<int>()] = e;
    }
    if (e["ph"] == "X") span[e["tid"].get<int>()][e["name"].get<std::string>()] = e;
  }
  CHECK(instant.count(0) == 0);  // served: its span, no instant
  CHECK(span[0].count("request 0") == 1);
  REQUIRE(instant.count(1) == 1);
  CHECK(instant[1]["name"] == "rejected");
  CHECK(instant[1]["ts"].get<double>() == 2000.0);
  CHECK(instant[1]["args"]["prompt_tokens"] == 5000);
  CHECK(instant[1]["args"]["generated_tokens"] == 0);
  CHECK_FALSE(instant[1]["args"]["reason"].get<std::string>().empty());
  CHECK(span[1].empty());  // never queued or prefilled
  REQUIRE(instant.count(2) == 1);
  CHECK(instant[2]["name"] == "timed_out");
  CHECK(instant[2]["ts"].get<double>() == 19000.0);
  CHECK_THAT(instant[2]["args"]["reason"].get<std::string>(), Catch::Contains("timeout_s"));
  CHECK(span[2].empty());  // it left from the queue: no admission, no phase
  REQUIRE(instant.count(3) == 1);
  CHECK(instant[3]["name"] == "unfinished");
  CHECK(instant[3]["ts"].get<double>() == 50000.0);
  CHECK(instant[3]["args"]["generated_tokens"] == 1);
  REQUIRE(span[3].count("queued") == 1);
  CHECK(span[3]["queued"]["ts"].get<double>() == 28000.0);
  CHECK(span[3]["queued"]["dur"].get<double>() == 2000.0);
  REQUIRE(span[3].count("prefill") == 1);
  CHECK(span[3]["prefill"]["ts"].get<double>() == 30000.0);
  CHECK(span[3]["prefill"]["dur"].get<double>() == 10000.0);
  CHECK(span[3].count("decode") == 0);
}

}  // namespace t_metrics_timeline_unserved_test
