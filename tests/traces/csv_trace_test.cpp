#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "tests/traces/trace_test_support.h"
#include "traces/factories.h"  // make_synthetic
#include "traces/workload_source.h"

namespace t_traces_csv_trace_test {

using namespace servesim;
using namespace servesim::test;

namespace {
std::string error_of(const std::string& text) {
  const std::string path = write_temp("t.csv", text);
  try {
    (void)read_csv_trace(path);
  } catch (const InputError& e) {
    std::string msg = e.what();
    REQUIRE(msg.rfind(path, 0) == 0);  // every message starts with the file
    return msg.substr(path.size());
  }
  return "no error";
}
}  // namespace

TEST_CASE("csv trace: columns in any order, extra ones ignored, rows sorted stably", "[traces]") {
  const auto rows = read_csv_trace(std::string(SERVESIM_SOURCE_DIR) + "/traces/data/tiny.csv");
  REQUIRE(rows.size() == 6);
  // File order: 0.000, 0.250, 0.100, 0.100, 1.000, 1.500 -> ids 0, 2, 3, 1, 4, 5 by arrival.
  CHECK(rows[0].id == 0);
  CHECK(rows[1].id == 2);
  CHECK(rows[2].id == 3);
  CHECK(rows[3].id == 1);
  CHECK(rows[3].arrival.count_ns() == 250'000'000);
  CHECK(rows[3].prompt_tokens == 128);
  CHECK(rows[3].output_tokens == 64);

  const auto swapped = read_csv_trace(
      write_temp("s.csv", "output_tokens,note,arrival_s,prompt_tokens\r\n5,x,0.5,7\r\n\r\n"));
  REQUIRE(swapped.size() == 1);
  CHECK(swapped[0].output_tokens == 5);
  CHECK(swapped[0].prompt_tokens == 7);
  CHECK(swapped[0].arrival.count_ns() == 500'000'000);
}

TEST_CASE("csv trace: decimal arrivals are exact nanoseconds, however late", "[traces]") {
  // 8,400,000 s is past 2^23 s, where a double no longer holds 9 decimals: the digits are taken
  // as they are. A tenth decimal rounds half up; an exponent form goes through a double.
  const auto rows =
      read_csv_trace(write_temp("late.csv",
                                "arrival_s,prompt_tokens,output_tokens\n8400000.123456789,1,1\n"
                                " 8400001.0000000015 ,1,1\n8400002,1,1\n8.400003e6,1,1\n"));
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].arrival.count_ns() == 8'400'000'123'456'789);
  CHECK(rows[1].arrival.count_ns() == 8'400'001'000'000'002);
  CHECK(rows[2].arrival.count_ns() == 8'400'002'000'000'000);
  CHECK(rows[3].arrival.count_ns() == 8'400'003'000'000'000);
}

TEST_CASE("csv trace: bad rows name the line, the column and what is allowed", "[traces]") {
  const std::string h = "arrival_s,prompt_tokens,output_tokens\n";
  CHECK(error_of("") ==
        ": empty file (expected a header with arrival_s, prompt_tokens, output_tokens)");
  CHECK(error_of(h) == ": the trace has a header but no requests");
  CHECK(error_of("arrival,prompt_tokens,output_tokens\n0,1,1\n") ==
        ":1: the header lacks column arrival_s (needs arrival_s, prompt_tokens, output_tokens; "
        "found: arrival,prompt_tokens,output_tokens)");
  CHECK(error_of(h + "0,1,1\n0.5,abc,3\n") ==
        ":3: column prompt_tokens = \"abc\": must be an integer from 1 to 1000000000");
  CHECK(error_of(h + "0,1,0\n") ==
        ":2: column output_tokens = \"0\": must be an integer from 1 to 1000000000 "
        "(workload.trace.zero_tokens: skip drops rows with a 0, and counts them)");
  CHECK(error_of(h + "0,1.5,2\n") ==
        ":2: column prompt_tokens = \"1.5\": must be an integer from 1 to 1000000000");
  CHECK(error_of(h + "-1,1,2\n") ==
        ":2: column arrival_s = \"-1\": must be a finite number from 0 to 9000000000");
  CHECK(error_of(h + "nan,1,2\n") ==
        ":2: column arrival_s = \"nan\": must be a finite number from 0 to 9000000000");
  CHECK(error_of(h + "inf,1,2\n") ==
        ":2: column arrival_s = \"inf\": must be a finite number from 0 to 9000000000");
  CHECK(error_of(h + "0,1\n") == ":2: 2 fields, but the header has 3 columns");
  CHECK(error_of(h + "0,1,2,3\n") == ":2: 4 fields, but the header has 3 columns");
  CHECK(error_of(h + "0,,2\n") ==
        ":2: column prompt_tokens = \"\": must be an integer from 1 to 1000000000");
}

TEST_CASE("csv trace: a missing trace file is reported at its config key", "[traces]") {
  try {
    (void)build_scenario(doc_of(
        "workload: {trace: {path: /nonexistent/x.csv}}\n"
        "step_time: {kind: linear, base_ms: 1}\nscheduler: {kind: static, max_batch_size: 1}\n"
        "kv: {policy: paged, capacity_tokens: 100}\n"));
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("workload.trace.path = \"/nonexistent/x.csv\" at "
                                         "test.yaml:1:26: no such trace file"));
  }
}

TEST_CASE("synthetic: same seed same workload, rates and ranges hold", "[traces]") {
  const std::string yaml =
      "requests: 20000\narrival: {kind: poisson, rate_per_s: 4}\n"
      "prompt_tokens: {kind: uniform, min: 16, max: 64}\n"
      "output_tokens: {kind: lognormal, median: 100, sigma: 0.5, min: 2, max: 1000}\n";
  auto doc = doc_of(yaml);
  auto a = make_synthetic(Cfg::root(doc), 42);
  auto b = make_synthetic(Cfg::root(doc_of(yaml)), 42);
  auto c = make_synthetic(Cfg::root(doc_of(yaml)), 43);
  RequestSpec ra, rb, rc;
  bool differs = false;
  Time last;
  double out_log_sum = 0;
  int64_t n = 0;
  while (a->next(ra)) {
    REQUIRE(b->next(rb));
    REQUIRE(c->next(rc));
    CHECK(ra.arrival == rb.arrival);
    CHECK(ra.prompt_tokens == rb.prompt_tokens);
    differs |= ra.arrival != rc.arrival;
    CHECK(ra.arrival >= last);
    last = ra.arrival;
    CHECK(ra.prompt_tokens >= 16);
    CHECK(ra.prompt_tokens <= 64);
    CHECK(ra.output_tokens >= 2);
    out_log_sum += std::log(ra.output_tokens);
    ++n;
  }
  CHECK(n == 20000);
  CHECK(differs);
  // 20,000 Poisson arrivals at 4/s take about 5,000 s (standard deviation about 35 s).
  CHECK(last.seconds() == Approx(5000).epsilon(0.03));
  // The lognormal's median is exp(mean log).
  CHECK(std::exp(out_log_sum / static_cast<double>(n)) == Approx(100).epsilon(0.03));
}

TEST_CASE("synthetic: fixed arrivals are evenly spaced from start_s", "[traces]") {
  auto src = make_synthetic(
      Cfg::root(doc_of("requests: 3\nstart_s: 1\narrival: {kind: fixed, interval_s: 0.25}\n"
                       "prompt_tokens: {kind: fixed, value: 5}\n"
                       "output_tokens: {kind: fixed, value: 6}\n")),
      1);
  RequestSpec r;
  std::vector<int64_t> t;
  while (src->next(r)) t.push_back(r.arrival.count_ns());
  CHECK(t == std::vector<int64_t>{1'000'000'000, 1'250'000'000, 1'500'000'000});
}

TEST_CASE("csv trace: class and priority columns", "[traces]") {
  // Classes are numbered in order of first appearance; an empty priority cell is 0.
  auto source =
      trace_of("path: " + write_temp("classes.csv",
                                     "arrival_s,prompt_tokens,output_tokens,class,priority\n"
                                     "0,1,1,chat,-3\n0.5,1,1,batch,\n1,1,1,chat,1000000000\n"
                                     "2,1,1,\"batch\",-1000000000\n"));
  const std::vector<RequestSpec> r = drain(*source);
  REQUIRE(r.size() == 4);
  CHECK(source->class_names() == std::vector<std::string>{"chat", "batch"});
  CHECK(r[0].class_id == 0);
  CHECK(r[1].class_id == 1);
  CHECK(r[2].class_id == 0);
  CHECK(r[3].class_id == 1);
  CHECK(r[0].priority == -3);
  CHECK(r[1].priority == 0);
  CHECK(r[2].priority == 1'000'000'000);
  CHECK(r[3].priority == -1'000'000'000);
  // Without the columns: no class names, priority 0.
  auto plain = trace_of("path: " +
                        write_temp("plain.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n"));
  CHECK(drain(*plain)[0].priority == 0);
  CHECK(plain->class_names().empty());
}

TEST_CASE("csv trace: a bad class or priority names the line and what is allowed", "[traces]") {
  const std::string h = "arrival_s,prompt_tokens,output_tokens,class,priority\n";
  const std::string range = "must be an integer from -1000000000 to 1000000000";
  CHECK(error_of(h + "0,1,1,a,abc\n") == ":2: column priority = \"abc\": " + range);
  CHECK(error_of(h + "0,1,1,a,1.5\n") == ":2: column priority = \"1.5\": " + range);
  CHECK(error_of(h + "0,1,1,a,0\n0,1,1,a,1000000001\n") ==
        ":3: column priority = \"1000000001\": " + range);
  CHECK(error_of(h + "0,1,1,a,-1000000001\n") == ":2: column priority = \"-1000000001\": " + range);
  const std::string names =
      "must be 1 to 64 characters from A-Z, a-z, 0-9, '_', '-' and '.' (every row names its "
      "class when the column is there)";
  CHECK(error_of(h + "0,1,1,,0\n") == ":2: column class = \"\": " + names);
  CHECK(error_of(h + "0,1,1,\"a b\",0\n") == ":2: column class = \"a b\": " + names);
  CHECK(error_of(h + "0,1,1," + std::string(65, 'x') + ",0\n") ==
        ":2: column class = \"" + std::string(40, 'x') + "\"... (65 bytes): " + names);
}

TEST_CASE("vllm jsonl: an optional integer priority field", "[traces]") {
  const auto rows = [](const std::string& text) {
    std::istringstream in(text);
    return read_vllm_jsonl(in, "p.jsonl");
  };
  const auto r = rows(
      "{\"input_toks\": 1, \"output_toks\": 1, \"arrival_time\": 0, \"priority\": -4}\n"
      "{\"input_toks\": 1, \"output_toks\": 1, \"arrival_time\": 1}\n");
  REQUIRE(r.size() == 2);
  CHECK(r[0].priority == -4);
  CHECK(r[1].priority == 0);
  const auto error = [&](const std::string& value) {
    try {
      (void)rows("{\"input_toks\": 1, \"output_toks\": 1, \"arrival_time\": 0, \"priority\": " +
                 value + "}\n");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string allowed = ": must be an integer from -1000000000 to 1000000000";
  CHECK(error("1.5") == "p.jsonl:1: field \"priority\" = 1.5" + allowed);
  // A string is shown as the file writes it, escaped (JsonLines::bad).
  CHECK(error("\"1\"") == "p.jsonl:1: field \"priority\" = \\\"1\\\"" + allowed);
  // A huge unsigned value must not wrap into range.
  CHECK(error("18446744073709551615") ==
        "p.jsonl:1: field \"priority\" = 18446744073709551615" + allowed);
  CHECK(error("-1000000001") == "p.jsonl:1: field \"priority\" = -1000000001" + allowed);
}

}  // namespace t_traces_csv_trace_test
