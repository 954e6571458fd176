// The acceptance lists of sim/speculative.cpp (read_shares): every item must be a number from 0
// to 1; an item that is a list or a map, or text, is refused by its position, never read as 0.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace t_sim_speculative_shares_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("speculative: an acceptance item that is not a number is refused by its position",
          "[sim][speculative]") {
  const std::string base =
      trace_scenario("0,4,9\n", "{kind: linear, base_ms: 1}",
                     "{kind: vllm, max_num_seqs: 4, enable_prefix_caching: false}",
                     "{policy: paged, capacity_tokens: 4096, block_size: 16}");
  const auto error = [&](const std::string& list) {
    return input_error_of(
        base + "speculative: {method: ngram, k: 2, acceptance: {per_position: " + list + "}}\n");
  };
  CHECK(error("[0, 0.5]") == "(no error)");
  CHECK_THAT(error("[[0], 0.5]"), Catch::Contains("item 1 is \"?\""));
  CHECK_THAT(error("[0.5, {a: 0}]"), Catch::Contains("item 2 is \"?\""));
  CHECK_THAT(error("[0.5, x]"), Catch::Contains("item 2 is \"x\""));
  CHECK_THAT(error("[0.5, -0.1]"), Catch::Contains("item 2 is \"-0.1\""));
}

}  // namespace t_sim_speculative_shares_test
