#include <filesystem>
#include <sstream>

#include "tests/test_paths.h"
#include "tests/traces/trace_test_support.h"
#include "traces/trace_reader.h"

namespace t_traces_trace_source_test {

using namespace servesim;
using namespace servesim::test;

namespace {
const std::string k_header = "arrival_s,prompt_tokens,output_tokens\n";
}  // namespace

TEST_CASE("trace: rows are read one at a time, as the run reaches them", "[traces]") {
  // Row 4 is malformed; the first two requests come out before anyone reads it.
  const std::string path = write_temp("lazy.csv", k_header + "0,1,1\n1,2,2\n2,x,3\n");
  auto source = trace_of("path: " + path + "\n");
  CHECK(source->size_hint() == 0);
  RequestSpec r;
  REQUIRE(source->next(r));
  CHECK(r.id == 0);
  REQUIRE(source->next(r));
  CHECK(r.id == 1);
  CHECK_THROWS_WITH(source->next(r),
                    Catch::EndsWith("lazy.csv:4: column prompt_tokens = \"x\": must be an "
                                    "integer from 1 to 1000000000"));
}

TEST_CASE("trace: a row that goes back in time names both rows and suggests sort", "[traces]") {
  CHECK(trace_error("t.csv", k_header + "0,1,1\n0.250,1,1\n0.100,1,1\n") ==
        "t.csv:4: column arrival_s = \"0.100\" is before the previous row's \"0.250\" (line 3): "
        "rows must be in non-decreasing arrival order (workload.trace.sort: true sorts the "
        "trace in memory)");
  CHECK(trace_error("v.jsonl",
                    "{\"input_toks\": 1, \"output_toks\": 1, \"arrival_time\": 10.5}\n\n"
                    "{\"input_toks\": 1, \"output_toks\": 1, \"arrival_time\": 10.25}\n") ==
        "v.jsonl:3: field \"arrival_time\" = 10.25 is before the previous row's 10.5 (line 1): "
        "rows must be in non-decreasing arrival order (workload.trace.sort: true sorts the "
        "trace in memory)");
  // Equal arrivals are in order.
  const auto rows =
      drain(*trace_of("path: " + write_temp("e.csv", k_header + "1,1,1\n1,2,2\n") + "\n"));
  CHECK(ids(rows) == std::vector<uint64_t>{0, 1});
}

TEST_CASE("trace: sort: true loads the trace and sorts it stably, ids in file order", "[traces]") {
  auto source =
      trace_of("path: " + std::string(SERVESIM_SOURCE_DIR) + "/traces/data/tiny.csv\nsort: true\n");
  CHECK(source->size_hint() == 6);
  const auto rows = drain(*source);
  // File order: 0.000, 0.250, 0.100, 0.100, 1.000, 1.500. servesim CSV keeps its time 0.
  CHECK(ids(rows) == std::vector<uint64_t>{0, 2, 3, 1, 4, 5});
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{0, 100'000'000, 100'000'000, 250'000'000,
                                                  1'000'000'000, 1'500'000'000});
  // Other formats start at their earliest request.
  const std::string v =
      write_temp("v.jsonl",
                 "{\"input_toks\": 1, \"output_toks\": 1, \"arrival_time\": 100.5}\n"
                 "{\"input_toks\": 2, \"output_toks\": 1, \"arrival_time\": 100.25}\n");
  const auto sorted = drain(*trace_of("path: " + v + "\nsort: true\n"));
  CHECK(ids(sorted) == std::vector<uint64_t>{1, 0});
  CHECK(arrivals_ns(sorted) == std::vector<int64_t>{0, 250'000'000});
}

TEST_CASE("trace: servesim CSV keeps its arrivals, the others start at the first request",
          "[traces]") {
  const auto csv = drain(*trace_of("path: " + write_temp("a.csv", k_header + "2.5,1,1\n") + "\n"));
  CHECK(csv[0].arrival.count_ns() == 2'500'000'000);
  const auto v = drain(*trace_of("path: " +
                                 write_temp("a.jsonl",
                                            "{\"input_toks\": 1, \"output_toks\": 1, "
                                            "\"arrival_time\": 1777142838.338653}\n"
                                            "{\"input_toks\": 1, \"output_toks\": 1, "
                                            "\"arrival_time\": 1777142838.6237123}\n") +
                                 "\n"));
  CHECK(v[0].arrival.count_ns() == 0);
  // Each epoch time is converted exactly as the double it is (steps of 238 ns at 1.8e9 s).
  CHECK(v[1].arrival.count_ns() == Approx(285'059'300).margin(240));
}

TEST_CASE("trace: an empty trace stops before the run starts", "[traces]") {
  CHECK(trace_error("t.csv", k_header) == "t.csv: the trace has a header but no requests");
  CHECK(trace_error("t.csv", k_header + "\n\n", "sort: true") ==
        "t.csv: the trace has a header but no requests");
  CHECK(trace_error("t.csv", k_header + "0,0,1\n", "zero_tokens: skip") ==
        "t.csv: the trace has no requests left (1 trace_rows_skipped_zero_tokens)");
  CHECK(trace_error("t.jsonl", "") == "t.jsonl: the trace has no requests");
  CHECK(trace_error("t.csv", "") ==
        "t.csv: empty file (expected a header with arrival_s, prompt_tokens, output_tokens)");
}

TEST_CASE("trace: format auto tells each format from its first line", "[traces]") {
  const auto format_of = [](const std::string& file) {
    return std::string(trace_format_name(detect_trace_format(file)));
  };
  CHECK(format_of(k_test_data + "azure_conv_2023_excerpt.csv") == "azure");
  CHECK(format_of(k_test_data + "azure_2024_style.csv") == "azure");
  CHECK(format_of(k_test_data + "burstgpt_excerpt.csv") == "burstgpt");
  CHECK(format_of(k_test_data + "burstgpt_sessions_excerpt.csv") == "burstgpt");
  CHECK(format_of(k_test_data + "mooncake_conversation_excerpt.jsonl") == "mooncake");
  CHECK(format_of(k_test_data + "vllm_requests_excerpt.jsonl") == "vllm_jsonl");
  CHECK(format_of(std::string(SERVESIM_SOURCE_DIR) + "/traces/data/tiny.csv") == "servesim_csv");
  // Blank lines and a UTF-8 byte-order mark before the header; a .csv name does not matter.
  CHECK(format_of(write_temp("x.csv", "\xEF\xBB\xBF\n  \n{\"timestamp\": 1}\n")) == "mooncake");
  // A header with a misspelt column still reaches its reader, which names the missing column.
  CHECK(format_of(write_temp("y.csv", "arrival,prompt_tokens,output_tokens\n")) == "servesim_csv");
  // An empty file goes by its name.
  CHECK(format_of(write_temp("e.jsonl", "")) == "vllm_jsonl");
  CHECK(format_of(write_temp("e.txt", "\n")) == "servesim_csv");
}

TEST_CASE("trace: a first line no format matches lists the known formats", "[traces]") {
  const std::string known =
      "known formats: servesim_csv (CSV header arrival_s, prompt_tokens, output_tokens); azure "
      "(CSV header TIMESTAMP, ContextTokens, GeneratedTokens); burstgpt (CSV header Timestamp, "
      "Model, Request tokens, Response tokens, ...); vllm_jsonl (JSON lines with input_toks, "
      "output_toks, arrival_time); mooncake (JSON lines with timestamp, input_length, "
      "output_length, hash_ids); sharegpt (one JSON array of entries with conversations; format: "
      "sharegpt); vidur (CSV header arrived_at, num_prefill_tokens, num_decode_tokens). Set "
      "workload.trace.format to name one";
  CHECK(trace_error("u.csv", "\ntime,in,out\n1,2,3\n") ==
        "u.csv:2: cannot tell the trace format from this line (\"time,in,out\"); " + known);
  CHECK(trace_error("u.jsonl", "{\"t\": 1, \"in\": 2}\n") ==
        "u.jsonl:1: cannot tell the trace format from this line (\"{\\\"t\\\": 1, \\\"in\\\": "
        "2}\"); " +
            known);
  CHECK(trace_error("u.csv",
                    "\xFF\xFE"
                    "a\x00,b\n") ==
        "u.csv:1: the file is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as "
        "UTF-8 or ASCII");
  // A first line that is not JSON goes to a JSON reader, which says where it breaks.
  CHECK(trace_error("u.jsonl", "{oops\n") == "u.jsonl:1: not a JSON object (column 2)");
}

TEST_CASE("trace: format names the reader, csv is servesim_csv", "[traces]") {
  const std::string path = k_test_data + "azure_conv_2023_excerpt.csv";
  CHECK(drain(*trace_of("path: " + path + "\nformat: azure\n")).size() == 30);
  CHECK_THAT(error_from([&] { (void)trace_of("path: " + path + "\nformat: csv\n"); }),
             Catch::StartsWith("azure_conv_2023_excerpt.csv:1: the header lacks column arrival_s"));
  CHECK_THAT(error_from([&] { (void)trace_of("path: " + path + "\nformat: servesim_csv\n"); }),
             Catch::StartsWith("azure_conv_2023_excerpt.csv:1: the header lacks column arrival_s"));
  CHECK_THAT(
      error_from([&] { (void)trace_of("path: " + path + "\nformat: azur\n"); }),
      Catch::Contains("unknown \"azur\" (did you mean azure?) (valid: auto, azure, "
                      "burstgpt, csv, mooncake, servesim_csv, sharegpt, vidur, vllm_jsonl)"));
  CHECK_THAT(error_from([&] { (void)trace_of("path: " + path + "\nzero_tokens: clamp\n"); }),
             Catch::Contains("(valid: error, skip)"));
}

TEST_CASE("trace: the stream API gives what the file gives", "[traces]") {
  std::istringstream in(k_header + "0,1,1\n0.5,2,2\n");
  TraceOptions o;
  auto source = open_trace(in, "<stdin>", o);
  CHECK(drain(*source).size() == 2);
  std::istringstream bad(
      "{\"timestamp\": 2, \"input_length\": 1, \"output_length\": 1}\n"
      "{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1}\n");
  o.format = "mooncake";
  CHECK_THROWS_WITH(drain(*open_trace(bad, "<stdin>", o)),
                    Catch::StartsWith("<stdin>:2: field \"timestamp\" = 1 is before"));
}

// The whole real traces in ../shared/data (not in the repository: a clean clone may lack them).
TEST_CASE("trace: every real Azure and Mooncake trace in shared data loads completely",
          "[traces]") {
  namespace fs = std::filesystem;
  const fs::path data = fs::path(SERVESIM_SHARED_DATA) / "traces";
  if (!fs::is_directory(data / "azure-llm-2023") || !fs::is_directory(data / "mooncake-fast25")) {
    WARN("skipped: no shared data at " << data.string());
    return;
  }
  const std::vector<std::pair<std::string, size_t>> files{
      {"azure-llm-2023/AzureLLMInferenceTrace_code.csv", 8819},
      {"azure-llm-2023/AzureLLMInferenceTrace_conv.csv", 19366},
      {"mooncake-fast25/conversation_trace.jsonl", 12031},
      {"mooncake-fast25/synthetic_trace.jsonl", 3993}};
  for (const auto& [file, count] : files) {
    INFO(file);
    auto source = trace_of("path: " + (data / file).string() + "\n");
    size_t n = 0;
    Time last;
    for (RequestSpec r; source->next(r); ++n) {
      CHECK(r.arrival >= last);
      last = r.arrival;
    }
    CHECK(n == count);
    CHECK(last.count_ns() > 0);
  }
}

}  // namespace t_traces_trace_source_test
