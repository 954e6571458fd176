#include "tests/traces/trace_test_support.h"

namespace t_traces_mooncake_trace_test {

using namespace servesim;
using namespace servesim::test;

namespace {
const std::string k_row = R"({"timestamp": 0, "input_length": 600, "output_length": 5)";

std::string mooncake_error(const std::string& text, const std::string& keys = "") {
  return trace_error("m.jsonl", text, "format: mooncake\n" + keys);
}
}  // namespace

TEST_CASE("mooncake: the conversation excerpt keeps its prompt block ids", "[traces]") {
  auto source = trace_of("path: " + k_test_data + "mooncake_conversation_excerpt.jsonl\n");
  const auto rows = drain(*source);
  REQUIRE(rows.size() == 30);
  CHECK(rows[0].arrival.count_ns() == 0);
  CHECK(rows[0].prompt_tokens == 6758);
  CHECK(rows[0].output_tokens == 500);
  // 6758 tokens are 14 blocks of 512 (the last one partial): ids 0 to 13.
  CHECK(rows[0].block_hashes ==
        std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  CHECK(rows[0].hash_block_tokens == 512);
  // The second request shares only block 0 with the first.
  CHECK(rows[1].block_hashes.size() == 15);
  CHECK(rows[1].block_hashes[0] == 0);
  CHECK(rows[1].block_hashes[1] == 14);
  // Row 11 is the first at timestamp 3000 ms; 13544 tokens are 27 blocks.
  CHECK(rows[9].arrival.count_ns() == 0);
  CHECK(rows[10].arrival.count_ns() == 3'000'000'000);
  CHECK(rows[10].prompt_tokens == 13544);
  CHECK(rows[10].block_hashes.size() == 27);
  CHECK(ids(rows).back() == 29);
}

TEST_CASE("mooncake: the synthetic excerpt reads with its millisecond timestamps", "[traces]") {
  auto source = trace_of("path: " + k_test_data + "mooncake_synthetic_excerpt.jsonl\n");
  const auto rows = drain(*source);
  REQUIRE(rows.size() == 30);
  CHECK(rows[1].arrival.count_ns() == 0);
  CHECK(rows[2].arrival.count_ns() == 40'000'000);  // timestamp 40
  CHECK(rows[0].prompt_tokens == 40160);
  CHECK(rows[0].block_hashes.size() == 79);  // ceil(40160 / 512)
}

TEST_CASE("mooncake: fewer block ids than blocks are kept, more are refused", "[traces]") {
  const std::string fewer = write_temp("f.jsonl", k_row + R"(, "hash_ids": [7]})"
                                                          "\n");
  auto source = trace_of("path: " + fewer + "\n");
  auto rows = drain(*source);
  CHECK(rows[0].block_hashes == std::vector<uint64_t>{7});
  CHECK(rows[0].hash_block_tokens == 512);

  CHECK(mooncake_error(k_row + R"(, "hash_ids": [1, 2, 3]})"
                               "\n") ==
        "m.jsonl:1: field \"hash_ids\" has 3 ids, more than the 2 blocks of 512 tokens in "
        "input_length 600: there must be at most one id per block "
        "(workload.trace.hash_block_tokens sets the block size)");
  // With 256-token blocks, 600 tokens are 3 blocks.
  const std::string three = write_temp("t.jsonl", k_row + R"(, "hash_ids": [1, 2, 3]})"
                                                          "\n");
  rows = drain(*trace_of("path: " + three + "\nhash_block_tokens: 256\n"));
  CHECK(rows[0].block_hashes.size() == 3);
  CHECK(rows[0].hash_block_tokens == 256);

  // Without hash_ids a request has no block ids, and no block size.
  const std::string none = write_temp("n.jsonl", k_row + "}\n");
  rows = drain(*trace_of("path: " + none + "\nformat: mooncake\n"));
  CHECK(rows[0].block_hashes.empty());
  CHECK(rows[0].hash_block_tokens == 0);
}

TEST_CASE("mooncake: bad lines name the file, line, field and what is allowed", "[traces]") {
  const std::string ok = R"({"timestamp": 5, "input_length": 10, "output_length": 2})"
                         "\n";
  CHECK(mooncake_error(ok + R"({"timestamp": -1, "input_length": 10, "output_length": 2})") ==
        "m.jsonl:2: field \"timestamp\" = -1: must be an integer number of milliseconds from 0 "
        "to 9000000000000");
  CHECK(mooncake_error(R"({"timestamp": 1.5, "input_length": 10, "output_length": 2})") ==
        "m.jsonl:1: field \"timestamp\" = 1.5: must be an integer number of milliseconds from 0 "
        "to 9000000000000");
  CHECK(mooncake_error(R"({"timestamp": 1, "output_length": 2})") ==
        "m.jsonl:1: missing field \"input_length\"");
  CHECK(mooncake_error(R"({"timestamp": 1, "input_length": 10, "output_length": 0})") ==
        "m.jsonl:1: field \"output_length\" = 0: must be an integer from 1 to 1000000000 "
        "(workload.trace.zero_tokens: skip drops rows with a 0, and counts them)");
  CHECK(mooncake_error(k_row + R"(, "hash_ids": [1, -3]})") ==
        "m.jsonl:1: field \"hash_ids\" = -3: each id must be an integer >= 0 (a prompt block id)");
  CHECK(mooncake_error(k_row + R"(, "hash_ids": ["a"]})") ==
        "m.jsonl:1: field \"hash_ids\" = \\\"a\\\": each id must be an integer >= 0 (a prompt "
        "block id)");
  CHECK(mooncake_error(k_row + R"(, "hash_ids": 5})") ==
        "m.jsonl:1: field \"hash_ids\" = 5: must be a list of integers >= 0 (prompt block ids)");
  CHECK(mooncake_error(ok + R"({"timestamp": 4, "input_length": 10, "output_length": 2})") ==
        "m.jsonl:2: field \"timestamp\" = 4 is before the previous row's 5 (line 1): rows must "
        "be in non-decreasing arrival order (workload.trace.sort: true sorts the trace in "
        "memory)");
  CHECK(mooncake_error(ok + "[1, 2]\n") == "m.jsonl:2: not a JSON object");
  CHECK(mooncake_error(ok + "{\"timestamp\": \n") == "m.jsonl:2: not a JSON object (column 15)");
  CHECK(mooncake_error("\n\n") == "m.jsonl: the trace has no requests");
}

TEST_CASE("mooncake: hash_block_tokens belongs to traces with block hashes only", "[traces]") {
  const std::string csv =
      write_temp("c.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n");
  const std::string msg =
      error_from([&] { (void)trace_of("path: " + csv + "\nhash_block_tokens: 256\n"); });
  CHECK_THAT(msg, Catch::Contains("hash_block_tokens = \"256\" at test.yaml:2:20: only mooncake "
                                  "traces (hash_ids) and servesim CSV (prefix_hash) have block "
                                  "hashes; this trace is read as azure"));
}

}  // namespace t_traces_mooncake_trace_test
