// workload.synthetic.lengths_from: a length-only trace (Vidur's arXiv-summarization lengths,
// excerpt in tests/data/) replayed with synthetic arrivals, each request taking one row's prompt
// and output together.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <utility>

#include "tests/traces/trace_test_support.h"

namespace t_traces_length_pairs_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_lengths = k_test_data + "arxiv_summarization_excerpt.csv";

/// The 20 (prompt, output) rows of the excerpt, in file order.
const std::vector<std::pair<int32_t, int32_t>> k_rows = {
    {3772, 54},  {2015, 156}, {3858, 133}, {2509, 79},  {3169, 189}, {3466, 43},  {3389, 231},
    {2655, 151}, {2131, 170}, {3443, 101}, {3174, 431}, {2814, 110}, {1920, 267}, {2657, 98},
    {3117, 133}, {3676, 181}, {2591, 803}, {3228, 107}, {2321, 178}, {3525, 318}};

std::vector<std::pair<int32_t, int32_t>> pairs(int64_t requests, const std::string& lengths_from,
                                               uint64_t seed = 1) {
  auto source = workload_of(
      fmt::format("synthetic: {{requests: {}, arrival: {{kind: poisson, rate_per_s: 2}}, "
                  "lengths_from: {{path: {}{}}}}}",
                  requests, k_lengths, lengths_from),
      seed);
  std::vector<std::pair<int32_t, int32_t>> out;
  for (const RequestSpec& r : drain(*source)) out.emplace_back(r.prompt_tokens, r.output_tokens);
  return out;
}

}  // namespace

TEST_CASE("lengths_from: sequential takes the rows in file order", "[traces]") {
  CHECK(pairs(20, ", order: sequential") == k_rows);
  // The columns are found by name; the defaults are Vidur's.
  CHECK(pairs(3, ", order: sequential, prompt_column: num_total_tokens") ==
        std::vector<std::pair<int32_t, int32_t>>{{3826, 54}, {2171, 156}, {3991, 133}});
}

TEST_CASE("lengths_from: shuffle (the default) uses every row once, pairs kept", "[traces]") {
  auto got = pairs(20, "");
  CHECK(got != k_rows);  // a permutation, not the file order (seed 1)
  std::sort(got.begin(), got.end());
  auto want = k_rows;
  std::sort(want.begin(), want.end());
  CHECK(got == want);
  CHECK(pairs(20, "", 3) == pairs(20, "", 3));
  CHECK(pairs(20, "", 3) != pairs(20, "", 4));
}

TEST_CASE("lengths_from: resample draws whole rows with replacement", "[traces]") {
  const auto got = pairs(2000, ", order: resample");
  for (const auto& p : got) REQUIRE(std::find(k_rows.begin(), k_rows.end(), p) != k_rows.end());
  // Every row turns up (each is missed with probability (19/20)^2000 ~ 1e-45).
  auto distinct = got;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  CHECK(distinct.size() == 20);
}

TEST_CASE("lengths_from: bad keys and files are named", "[traces]") {
  CHECK_THAT(error_from([] { (void)pairs(21, ""); }),
             Catch::Contains("shuffle uses each row once, but requests (21) is more than the "
                             "file's 20 rows; order: resample draws rows with replacement"));
  CHECK_THAT(error_from([] { (void)pairs(2, ", output_column: decode"); }),
             Catch::Contains("decode"));
  CHECK_THAT(error_from([] { (void)pairs(2, ", order: random"); }),
             Catch::Contains("resample, sequential, shuffle"));
  CHECK_THAT(error_from([] {
               (void)workload_of(fmt::format(
                   "synthetic: {{requests: 2, arrival: {{kind: poisson, rate_per_s: 2}}, "
                   "lengths_from: {{path: {}}}, prompt_tokens: {{kind: fixed, value: 1}}}}",
                   k_lengths));
             }),
             Catch::Contains("lengths_from gives both lengths"));
  const std::string zero = write_temp("z.csv", "num_prefill_tokens,num_decode_tokens\n5,0\n");
  CHECK_THAT(error_from([&] {
               (void)workload_of(fmt::format(
                   "synthetic: {{requests: 1, arrival: {{kind: poisson, rate_per_s: 2}}, "
                   "lengths_from: {{path: {}}}}}",
                   zero));
             }),
             Catch::StartsWith("z.csv:2: column num_decode_tokens = \"0\""));
}

}  // namespace t_traces_length_pairs_test
