// The vidur and sharegpt trace formats (traces/vidur_trace.cpp, traces/sharegpt_trace.cpp,
// docs/workloads.md#vidur and #sharegpt).
#include <catch2/catch.hpp>

#include "tests/traces/trace_test_support.h"

namespace t_traces_vidur_sharegpt_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("vidur: arrived_at, num_prefill_tokens, num_decode_tokens, found by its header",
          "[traces]") {
  // Arrivals relative to the first row: 1.5 s -> 0, 2.25 s -> 0.75 s. The id column is ignored.
  const std::string path = write_temp(
      "v.csv", "id,arrived_at,num_prefill_tokens,num_decode_tokens\n0,1.5,100,7\n1,2.25,20,3\n");
  const std::vector<RequestSpec> rs = drain(*trace_of("path: " + path + "\n"));
  REQUIRE(rs.size() == 2);
  CHECK(arrivals_ns(rs) == std::vector<int64_t>{0, 750'000'000});
  CHECK(rs[0].prompt_tokens == 100);
  CHECK(rs[0].output_tokens == 7);
  CHECK(rs[1].prompt_tokens == 20);
  CHECK(rs[1].output_tokens == 3);
  const std::string bad = write_temp("w.csv", "arrived_at,num_prefill_tokens,num_decode\n0,1,1\n");
  CHECK_THAT(error_from([&] { (void)trace_of("path: " + bad + "\nformat: vidur\n"); }),
             Catch::Contains("the header lacks column num_decode_tokens"));
}

TEST_CASE("sharegpt: first turn the prompt, second the output, ceil(bytes / 4) tokens",
          "[traces]") {
  // "Hi" (2 bytes) -> 1 token; 41 bytes of "x" -> 11 tokens (kept as its length while parsing:
  // longer than 32 bytes); "hello world!" (12 bytes) -> 3; "é" is 2 bytes of UTF-8 -> 1 token.
  // A third turn is ignored. Every request arrives at 0.
  const std::string long_text(41, 'x');
  const std::string path =
      write_temp("s.json",
                 "[{\"id\": \"a\", \"conversations\": [{\"from\": \"human\", \"value\": \"Hi\"}, "
                 "{\"from\": \"gpt\", \"value\": \"" +
                     long_text +
                     "\"}]},\n"
                     " {\"id\": \"b\", \"conversations\": [{\"from\": \"human\", \"value\": "
                     "\"hello world!\"}, {\"from\": \"gpt\", \"value\": \"\xC3\xA9\"}, "
                     "{\"from\": \"human\", \"value\": \"more\"}]}]\n");
  const std::vector<RequestSpec> rs = drain(*trace_of("path: " + path + "\nformat: sharegpt\n"));
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].prompt_tokens == 1);
  CHECK(rs[0].output_tokens == 11);
  CHECK(rs[1].prompt_tokens == 3);
  CHECK(rs[1].output_tokens == 1);
  CHECK(arrivals_ns(rs) == std::vector<int64_t>{0, 0});
}

TEST_CASE("sharegpt: an entry with one turn is refused unless zero_tokens: skip", "[traces]") {
  const std::string path = write_temp(
      "s.json",
      "[{\"conversations\": [{\"from\": \"human\", \"value\": \"alone\"}]},"
      " {\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"from\": \"gpt\", "
      "\"value\": \"b\"}]}]");
  CHECK_THAT(error_from([&] { (void)trace_of("path: " + path + "\nformat: sharegpt\n"); }),
             Catch::Contains("s.json: entry 1: 1 turn(s): needs a prompt and a reply "
                             "(workload.trace.zero_tokens: skip drops such entries"));
  auto source = trace_of("path: " + path + "\nformat: sharegpt\nzero_tokens: skip\n");
  CHECK(drain(*source).size() == 1);
  CHECK(source->counters() ==
        std::vector<std::pair<std::string, int64_t>>{{"trace_rows_skipped_zero_tokens", 1}});
  const std::string not_array = write_temp("o.json", "{\"conversations\": []}");
  CHECK_THAT(error_from([&] { (void)trace_of("path: " + not_array + "\nformat: sharegpt\n"); }),
             Catch::Contains("a ShareGPT file is one JSON array"));
}

}  // namespace t_traces_vidur_sharegpt_test
