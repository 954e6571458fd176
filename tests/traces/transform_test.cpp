#include "core/random.h"
#include "tests/traces/trace_test_support.h"

namespace t_traces_transform_test {

using namespace servesim;
using namespace servesim::test;

namespace {
using Counters = std::vector<std::pair<std::string, int64_t>>;

/// Five requests, one a second from 0 s: prompts 100..500, outputs 10..50.
std::string five() {
  static const std::string path =
      write_temp("five.csv",
                 "arrival_s,prompt_tokens,output_tokens\n0,100,10\n1,200,20\n"
                 "2,300,30\n3,400,40\n4,500,50\n");
  return "trace: {path: " + path + "}\n";
}

std::unique_ptr<WorkloadSource> transformed(const std::string& keys, uint64_t seed = 1) {
  return workload_of(five() + "transform: {" + keys + "}\n", seed);
}

std::vector<int32_t> prompts(const std::vector<RequestSpec>& rows) {
  std::vector<int32_t> out;
  for (const auto& r : rows) out.push_back(r.prompt_tokens);
  return out;
}

constexpr int64_t s(double seconds) { return static_cast<int64_t>(seconds * 1e9); }
}  // namespace

TEST_CASE("transform: rate_scale divides every arrival", "[traces]") {
  auto source = transformed("rate_scale: 2");
  CHECK(arrivals_ns(drain(*source)) == std::vector<int64_t>{0, s(0.5), s(1), s(1.5), s(2)});
  CHECK(source->counters().empty());
  CHECK(arrivals_ns(drain(*transformed("rate_scale: 0.5"))) ==
        std::vector<int64_t>{0, s(2), s(4), s(6), s(8)});
}

TEST_CASE("transform: target_rate_per_s scales the mean rate to the target", "[traces]") {
  // Mean rate (5 - 1) / (4 s - 0 s) = 1/s; a target of 4/s divides arrivals by 4.
  CHECK(arrivals_ns(drain(*transformed("target_rate_per_s: 4"))) ==
        std::vector<int64_t>{0, s(0.25), s(0.5), s(0.75), s(1)});
  // Measured after the window: [1, 5) keeps 1..4 s, shifted to 0..3 s: 1/s again; target 0.5/s.
  CHECK(arrivals_ns(drain(*transformed("window_start_s: 1, target_rate_per_s: 0.5"))) ==
        std::vector<int64_t>{0, s(2), s(4), s(6)});
  // A synthetic workload is measured the same way (fixed: one every 0.25 s, 4/s).
  const std::string synthetic =
      "synthetic: {requests: 5, arrival: {kind: fixed, interval_s: 0.25},\n"
      "  prompt_tokens: {kind: fixed, value: 5}, output_tokens: {kind: fixed, value: 6}}\n";
  CHECK(arrivals_ns(drain(*workload_of(synthetic + "transform: {target_rate_per_s: 1}\n"))) ==
        std::vector<int64_t>{0, s(1), s(2), s(3), s(4)});
}

TEST_CASE("transform: a window keeps arrivals from its start up to its end, from time 0",
          "[traces]") {
  auto source = transformed("window_start_s: 1, window_end_s: 3");
  const auto rows = drain(*source);
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{0, s(1)});
  CHECK(prompts(rows) == std::vector<int32_t>{200, 300});
  CHECK(ids(rows) == std::vector<uint64_t>{0, 1});
  CHECK(source->counters() == Counters{{"transform_dropped_before_window", 1}});
  // Only an end: nothing is shifted.
  CHECK(arrivals_ns(drain(*transformed("window_end_s: 2.5"))) ==
        std::vector<int64_t>{0, s(1), s(2)});
  // The window is in the source's time, before the rate scale.
  CHECK(arrivals_ns(drain(*transformed("window_start_s: 1, rate_scale: 2"))) ==
        std::vector<int64_t>{0, s(0.5), s(1), s(1.5)});
}

TEST_CASE("transform: length filters drop requests outside the bounds", "[traces]") {
  auto source =
      transformed("min_prompt_tokens: 200, max_prompt_tokens: 400, max_output_tokens: 30");
  const auto rows = drain(*source);
  // Prompts 200, 300, 400 pass; of those, outputs 20, 30 pass.
  CHECK(prompts(rows) == std::vector<int32_t>{200, 300});
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{s(1), s(2)});
  CHECK(ids(rows) == std::vector<uint64_t>{0, 1});
  CHECK(source->counters() ==
        Counters{{"transform_dropped_prompt_tokens", 2}, {"transform_dropped_output_tokens", 1}});
}

TEST_CASE("transform: max_context_tokens cuts the prompt first, then the output", "[traces]") {
  auto source = transformed("max_context_tokens: 250");
  const auto rows = drain(*source);
  // 110 and 220 fit; 300+30 -> 220+30; 400+40 -> 210+40; 500+50 -> 200+50.
  CHECK(prompts(rows) == std::vector<int32_t>{100, 200, 220, 210, 200});
  CHECK(rows[4].output_tokens == 50);
  CHECK(source->counters() == Counters{{"transform_capped_context_tokens", 3}});
  // An output as long as the cap leaves a 1-token prompt and cap - 1 output tokens.
  const auto small = drain(
      *workload_of("trace: {path: " +
                   write_temp("long.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,300\n") +
                   "}\ntransform: {max_context_tokens: 250}\n"));
  CHECK(small[0].prompt_tokens == 1);
  CHECK(small[0].output_tokens == 249);
  // A cut prompt keeps only the block ids of the blocks it still has: 6758 -> 1100 tokens,
  // 3 blocks of 512.
  const auto hashed =
      drain(*workload_of("trace: {path: " + k_test_data +
                         "mooncake_conversation_excerpt.jsonl}\n"
                         "transform: {max_context_tokens: 1600, max_output_tokens: 500}\n"));
  CHECK(hashed[0].prompt_tokens == 1100);
  CHECK(hashed[0].block_hashes == std::vector<uint64_t>{0, 1, 2});
}

TEST_CASE("transform: sample_fraction keeps requests by the seeded generator", "[traces]") {
  const std::string synthetic =
      "synthetic: {requests: 1000, arrival: {kind: fixed, interval_s: 1},\n"
      "  prompt_tokens: {kind: fixed, value: 5}, output_tokens: {kind: fixed, value: 6}}\n"
      "transform: {sample_fraction: 0.3}\n";
  auto source = workload_of(synthetic, 7);
  const auto rows = drain(*source);
  // The keep draws come from Rng(seed XOR "sample"), one per request reaching the sampler.
  Rng rng(7 ^ 0x73616d706c65ULL);
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 1000; ++i)
    if (rng.uniform01() < 0.3) expected.push_back(i * 1'000'000'000);
  CHECK(arrivals_ns(rows) == expected);
  CHECK(rows.size() == Approx(300).margin(45));
  CHECK(ids(rows).back() == rows.size() - 1);
  CHECK(source->counters() ==
        Counters{{"transform_dropped_sample", 1000 - static_cast<int64_t>(rows.size())}});
  // The same seed gives the same sample; another seed another.
  CHECK(arrivals_ns(drain(*workload_of(synthetic, 7))) == expected);
  CHECK(arrivals_ns(drain(*workload_of(synthetic, 8))) != expected);
}

TEST_CASE("transform: the counters follow the trace's own", "[traces]") {
  const std::string path =
      write_temp("z.csv", "arrival_s,prompt_tokens,output_tokens\n0,0,1\n1,5,5\n2,9,9\n");
  auto source = workload_of("trace: {path: " + path +
                            ", zero_tokens: skip}\n"
                            "transform: {max_prompt_tokens: 8}\n");
  CHECK(drain(*source).size() == 1);
  CHECK(source->counters() ==
        Counters{{"trace_rows_skipped_zero_tokens", 1}, {"transform_dropped_prompt_tokens", 1}});
}

TEST_CASE("transform: contradictory or empty settings name the key", "[traces]") {
  const auto err = [](const std::string& keys) {
    return error_from([&] { (void)drain(*transformed(keys)); });
  };
  CHECK_THAT(
      err("rate_scale: 2, target_rate_per_s: 3"),
      Catch::Contains(
          "workload.transform.target_rate_per_s = \"3\" at test.yaml:3:49: give rate_scale or "
          "target_rate_per_s, not both"));
  CHECK_THAT(err("min_prompt_tokens: 300, max_prompt_tokens: 200"),
             Catch::Contains(
                 "workload.transform.max_prompt_tokens = \"200\" at test.yaml:3:58: must be >= "
                 "min_prompt_tokens (300)"));
  CHECK_THAT(err("window_start_s: 3, window_end_s: 3"),
             Catch::Contains("workload.transform.window_end_s = \"3\" at test.yaml:3:48: must be > "
                             "3 and <= 9000000000"));
  CHECK_THAT(err("rate_scale: 0"), Catch::Contains("rate_scale = \"0\""));
  CHECK_THAT(err("sample_fraction: 1.5"), Catch::Contains("sample_fraction = \"1.5\""));
  CHECK_THAT(err("max_context_tokens: 1"), Catch::Contains("max_context_tokens = \"1\""));
  CHECK_THAT(err(""), Catch::Contains("workload.transform at test.yaml:3:14: give at least one "
                                      "of max_context_tokens, max_output_tokens"));
  // A transform of only unknown keys names the first, not the keys it lacks.
  CHECK_THAT(err("max_requests: 200"),
             Catch::Contains("workload.transform.max_requests at test.yaml:3:15: unknown key "
                             "(valid here: max_context_tokens, max_output_tokens"));
  CHECK_THAT(err("rate_scal: 2"), Catch::Contains("workload.transform.rate_scal at test.yaml:3:15: "
                                                  "unknown key (did you mean rate_scale?)"));
  CHECK_THAT(err("min_prompt_tokens: 600"),
             Catch::Contains("workload.transform at test.yaml:3:14: no request is left after "
                             "the transform (5 transform_dropped_prompt_tokens)"));
  CHECK_THAT(
      err("window_start_s: 3.5, target_rate_per_s: 1"),
      Catch::Contains(
          "workload.transform.target_rate_per_s = \"1\" at test.yaml:3:55: needs at least two "
          "requests at different times to measure the workload's rate (found "
          "1 request over 0 s); use rate_scale"));
  CHECK_THAT(err("rate_scale: 1e-10"),
             Catch::Contains("workload.transform in test.yaml: request 1 of the source would "
                             "arrive at 1e+10 s after the time scale, past the simulator's limit "
                             "of 9e+09 s"));
  CHECK_THAT(error_from([&] { (void)workload_of(five() + "transfrom: {rate_scale: 2}\n"); }),
             Catch::Contains("transfrom"));
}

}  // namespace t_traces_transform_test
