// Issue 19: a JSON trace line that names a field twice is refused (nlohmann::json kept the last
// one silently, so the run used a value the file also contradicted).
#include <catch2/catch.hpp>

#include "tests/traces/trace_test_support.h"

namespace t_traces_json_duplicate_keys_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("json traces: a field given twice in a line is refused", "[traces][hostile]") {
  const std::string vllm_ok = R"({"input_toks": 3, "output_toks": 2, "arrival_time": 0})"
                              "\n";
  REQUIRE(trace_error("v.jsonl", vllm_ok, "format: vllm_jsonl") == "no error");
  CHECK(trace_error("v.jsonl",
                    vllm_ok + R"({"input_toks": 3, "output_toks": 2, "arrival_time": 1, )"
                              R"("input_toks": 5})",
                    "format: vllm_jsonl") ==
        "v.jsonl:2: field \"input_toks\" is given twice in one object; give each field once");
  CHECK(trace_error("m.jsonl",
                    R"({"timestamp": 0, "input_length": 10, "output_length": 2, )"
                    R"("timestamp": 7})",
                    "format: mooncake") ==
        "m.jsonl:1: field \"timestamp\" is given twice in one object; give each field once");
  // Inside a nested object too; the same key in two sibling objects is fine.
  CHECK(trace_error("v.jsonl",
                    R"({"input_toks": 3, "output_toks": 2, "arrival_time": 0, )"
                    R"("x": {"a": 1, "a": 2}})",
                    "format: vllm_jsonl") ==
        "v.jsonl:1: field \"a\" is given twice in one object; give each field once");
  CHECK(trace_error("v.jsonl",
                    R"({"input_toks": 3, "output_toks": 2, "arrival_time": 0, )"
                    R"("x": {"a": 1}, "y": {"a": 2}})",
                    "format: vllm_jsonl") == "no error");
}

}  // namespace t_traces_json_duplicate_keys_test
