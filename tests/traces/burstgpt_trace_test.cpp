#include "tests/traces/trace_test_support.h"

namespace t_traces_burstgpt_trace_test {

using namespace servesim;
using namespace servesim::test;

namespace {
const std::string k_excerpt = "path: " + k_test_data + "burstgpt_excerpt.csv\n";
constexpr int64_t s(double seconds) { return static_cast<int64_t>(seconds * 1e9); }
}  // namespace

TEST_CASE("burstgpt: a failed request (0 response tokens) stops the run unless skipped",
          "[traces]") {
  // Line 4 is a GPT-4 request logged with 0 response tokens.
  CHECK(error_from([&] { (void)drain(*trace_of(k_excerpt)); }) ==
        "burstgpt_excerpt.csv:4: column Response tokens = \"0\": must be an integer from 1 to "
        "1000000000 (workload.trace.zero_tokens: skip drops rows with a 0, and counts them)");

  auto source = trace_of(k_excerpt + "zero_tokens: skip\n");
  const auto rows = drain(*source);
  // Kept: lines 2, 3, 5, 6, 7, 9 at 5, 45, 122, 122.5, 190, 260 s; the first is time 0.
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{0, s(40), s(117), s(117.5), s(185), s(255)});
  CHECK(ids(rows) == std::vector<uint64_t>{0, 1, 2, 3, 4, 5});
  CHECK(rows[1].prompt_tokens == 1087);
  CHECK(rows[1].output_tokens == 136);
  CHECK(source->counters() ==
        std::vector<std::pair<std::string, int64_t>>{{"trace_rows_skipped_zero_tokens", 2}});
}

TEST_CASE("burstgpt: model keeps one model's requests and counts the others", "[traces]") {
  auto chatgpt = trace_of(k_excerpt + "model: ChatGPT\nzero_tokens: skip\n");
  auto rows = drain(*chatgpt);
  // ChatGPT rows: lines 2, 3, 5, 7 (5, 45, 122, 190 s) and line 8, which failed.
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{0, s(40), s(117), s(185)});
  CHECK(chatgpt->counters() ==
        std::vector<std::pair<std::string, int64_t>>{{"trace_rows_skipped_zero_tokens", 1},
                                                     {"trace_rows_skipped_other_model", 3}});

  auto gpt4 = trace_of(k_excerpt + "model: GPT-4\nzero_tokens: skip\n");
  rows = drain(*gpt4);
  // GPT-4 rows: line 4 (failed), lines 6 and 9 at 122.5 and 260 s.
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{0, s(137.5)});
  CHECK(rows[0].prompt_tokens == 2210);

  // Without zero_tokens: skip, ChatGPT's failed row on line 8 stops the run; GPT-4's on line
  // 4 is another model's and does not.
  CHECK_THAT(error_from([&] { (void)drain(*trace_of(k_excerpt + "model: ChatGPT\n")); }),
             Catch::StartsWith("burstgpt_excerpt.csv:8: column Response tokens = \"0\""));
  CHECK(error_from([&] { (void)drain(*trace_of(k_excerpt + "model: Claude\n")); }) ==
        "burstgpt_excerpt.csv: the trace has no requests left (8 "
        "trace_rows_skipped_other_model)");
}

TEST_CASE("burstgpt: the release with Session ID and Elapsed time reads alike", "[traces]") {
  auto source = trace_of("path: " + k_test_data + "burstgpt_sessions_excerpt.csv\n");
  const auto rows = drain(*source);
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{0, s(2.5), s(2.5), s(7.75)});
  CHECK(rows[2].prompt_tokens == 1200);
  CHECK(rows[2].output_tokens == 230);
  CHECK(source->counters().empty());
}

TEST_CASE("burstgpt: bad rows name the file, line, column and what is allowed", "[traces]") {
  const std::string h = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
  const auto err = [](const std::string& text) { return trace_error("b.csv", text); };
  CHECK(err(h + "5,ChatGPT,x,18,490,API log\n") ==
        "b.csv:2: column Request tokens = \"x\": must be an integer from 1 to 1000000000");
  CHECK(err(h + "-5,ChatGPT,1,18,490,API log\n") ==
        "b.csv:2: column Timestamp = \"-5\": must be a finite number from 0 to 9000000000");
  CHECK(err(h + "5,ChatGPT,1,18,490,API log\n4.5,ChatGPT,1,18,490,API log\n") ==
        "b.csv:3: column Timestamp = \"4.5\" is before the previous row's \"5\" (line 2): rows "
        "must be in non-decreasing arrival order (workload.trace.sort: true sorts the trace in "
        "memory)");
  CHECK(err(h + "5,ChatGPT,1,18,490\n") == "b.csv:2: 5 fields, but the header has 6 columns");
  CHECK(err("Timestamp,Model,Request tokens,Response,Total tokens,Log Type\n5,a,1,1,2,x\n") ==
        "b.csv:1: the header lacks column Response tokens (needs Timestamp, Model, Request "
        "tokens, Response tokens; found: Timestamp,Model,Request tokens,Response,Total "
        "tokens,Log Type)");
}

TEST_CASE("burstgpt: model belongs to burstgpt traces only", "[traces]") {
  const std::string msg = error_from([&] {
    (void)trace_of("path: " + k_test_data + "azure_conv_2023_excerpt.csv\nmodel: ChatGPT\n");
  });
  CHECK_THAT(msg, Catch::Contains("model = \"ChatGPT\" at test.yaml:2:8: only burstgpt traces "
                                  "have a Model column; this trace is read as azure"));
}

}  // namespace t_traces_burstgpt_trace_test
