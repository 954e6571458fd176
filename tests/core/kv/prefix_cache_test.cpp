// Prefix caching in the paged KV manager (kv.prefix_caching): hits worked out by hand on tiny
// workloads whose shared content is given by a conversation stream or by trace block hashes.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_core_kv_prefix_cache_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Requests given in the test, in arrival order.
class ListSource final : public WorkloadSource {
 public:
  explicit ListSource(std::vector<RequestSpec> specs) : m_specs(std::move(specs)) {}
  bool next(RequestSpec& out) override {
    if (m_pos == m_specs.size()) return false;
    out = m_specs[m_pos];
    out.id = m_pos++;
    return true;
  }
  size_t size_hint() const override { return m_specs.size(); }

 private:
  std::vector<RequestSpec> m_specs;
  size_t m_pos = 0;
};

RequestSpec spec(double arrival_s, int32_t prompt, int32_t output, uint64_t stream = 0,
                 std::vector<uint64_t> hashes = {}, int32_t hash_tokens = 0) {
  RequestSpec s;
  s.arrival = Time::from_seconds(arrival_s);
  s.prompt_tokens = prompt;
  s.output_tokens = output;
  s.content_stream = stream;
  s.block_hashes = std::move(hashes);
  s.hash_block_tokens = hash_tokens;
  return s;
}

struct Result {
  Summary summary;
  std::vector<Request> requests;
};

/// Continuous batching, 1 ms + 0.01 ms a prefill token, 16-token blocks.
Result run(std::vector<RequestSpec> specs, int64_t capacity_tokens, bool caching = true) {
  Scenario sc = build_scenario(
      doc_of("workload: {synthetic: {requests: 1, arrival: {kind: fixed, rate_per_s: 1},\n"
             "  prompt_tokens: {kind: fixed, value: 1}, output_tokens: {kind: fixed, value: 1}}}\n"
             "step_time: {kind: linear, base_ms: 1, per_prefill_token_ms: 0.01}\n"
             "scheduler: {kind: continuous, max_num_seqs: 4}\n"
             "kv: {policy: paged, block_size: 16, prefix_caching: " +
             std::string(caching ? "true" : "false") +
             ", capacity_tokens: " + std::to_string(capacity_tokens) + "}\n"));
  sc.components.source = std::make_unique<ListSource>(std::move(specs));
  Simulation sim(std::move(sc.components), /*check=*/true);
  CollectingRecorder rec;
  sim.add_recorder(rec);
  MetricsRecorder metrics;
  sim.add_recorder(metrics);
  sim.run();
  return {metrics.summary(sim.stats()), rec.by_id()};
}

}  // namespace

TEST_CASE("prefix cache: a conversation's next turn reuses the full blocks of the last one",
          "[core][prefix]") {
  // Turn 0: 40 prompt tokens, 2 output; its KV reaches 41 tokens, so blocks 0 and 1 (tokens
  // 0-31) are full and cached. Turn 1 (60 tokens) finds them: 32 tokens cached, 28 computed.
  // Its block 2 (tokens 32-47) was never full in turn 0, so it is a miss.
  const Result r = run({spec(0, 40, 2, 7), spec(1, 60, 1, 7)}, 1000);
  REQUIRE(r.summary.prefix.has_value());
  CHECK(r.summary.prefix->queried_tokens == 100);
  CHECK(r.summary.prefix->hit_tokens == 32);
  CHECK(r.summary.prefix->queried_blocks == 2 + 3);
  CHECK(r.summary.prefix->hit_blocks == 2);
  CHECK(r.summary.prefill_tokens_computed == 40 + 28);
  // TTFT of turn 1: one prefill step of 28 tokens, 1 + 0.28 ms (not 1.6 ms for 60 tokens).
  CHECK((r.requests[1].first_token - r.requests[1].spec.arrival).count_ns() == ms(1.28));
  CHECK(r.requests[1].cached_prompt_tokens == 32);
  // Without caching nothing is reused and the counters are absent.
  const Result off = run({spec(0, 40, 2, 7), spec(1, 60, 1, 7)}, 1000, false);
  CHECK_FALSE(off.summary.prefix.has_value());
  CHECK(off.summary.prefill_tokens_computed == 100);
}

TEST_CASE("prefix cache: trace block hashes share a prefix only while every hash agrees",
          "[core][prefix]") {
  // Hash blocks of 32 tokens; KV blocks of 16. r1 shares hash 1 (tokens 0-31) with r0: KV
  // blocks 0 and 1 hit; block 2 lies in hash block 1, where r0 has 2 and r1 has 3: a miss.
  // r2 repeats r0 exactly: blocks 0-2 hit; block 3 holds r2's last prompt token, which is
  // always computed, so at most (64 - 1) / 16 = 3 blocks can hit.
  const Result r = run({spec(0, 64, 1, 0, {1, 2}, 32), spec(1, 70, 1, 0, {1, 3, 9}, 32),
                        spec(2, 64, 1, 0, {1, 2}, 32)},
                       1000);
  REQUIRE(r.summary.prefix.has_value());
  CHECK(r.requests[0].cached_prompt_tokens == 0);
  CHECK(r.requests[1].cached_prompt_tokens == 32);
  CHECK(r.requests[2].cached_prompt_tokens == 48);
  CHECK(r.summary.prefix->hit_tokens == 80);
  CHECK(r.summary.prefix->queried_tokens == 64 + 70 + 64);
}

TEST_CASE("prefix cache: freed blocks stay cached until the LRU front is needed",
          "[core][prefix]") {
  // 4 blocks. r0 (stream 1, 32 tokens) takes blocks 0,1, caches both; released last block
  // first, the free queue is 2,3,1,0. r1 (stream 2, 48 tokens) takes 2,3,1: block 1 (r0's
  // tokens 16-31) is evicted; released, the queue is 0,1,3,2. r2 (stream 1, 40 tokens) finds
  // block 0 (tokens 0-15) still cached, but not tokens 16-31: 16 tokens hit. It takes block 0
  // back and two fresh blocks from the front, 1 and 3, evicting r1's cached blocks 2 and 1.
  const Result r = run({spec(0, 32, 1, 1), spec(1, 48, 1, 2), spec(2, 40, 1, 1)}, 64);
  REQUIRE(r.summary.prefix.has_value());
  CHECK(r.summary.prefix->evicted_blocks == 3);
  CHECK(r.requests[2].cached_prompt_tokens == 16);
  CHECK(r.summary.prefix->hit_tokens == 16);
}

TEST_CASE("prefix cache: requests sharing blocks at once stay within capacity, all served",
          "[core][prefix]") {
  // 60 requests of one stream arriving together share their leading blocks while running;
  // the engine's invariant checks (on in run()) hold at every step and all are served.
  std::vector<RequestSpec> specs;
  for (int i = 0; i < 60; ++i) specs.push_back(spec(0.001 * i, 100 + i, 20, 5));
  const Result r = run(specs, 2048);
  CHECK(r.summary.finished == 60);
  CHECK(r.summary.prefix->hit_tokens > 0);
  CHECK(r.summary.kv_peak_used_tokens <= 2048);
}

TEST_CASE("prefix cache: a capacity of more blocks than it can track is a config error",
          "[core][prefix]") {
  CHECK_THROWS_WITH(
      build_scenario(doc_of(
          "workload: {synthetic: {requests: 1, arrival: {kind: fixed, rate_per_s: 1},\n"
          "  prompt_tokens: {kind: fixed, value: 1}, output_tokens: {kind: fixed, value: 1}}}\n"
          "step_time: {kind: linear, base_ms: 1}\nscheduler: {kind: continuous, max_num_seqs: 4}\n"
          "kv: {policy: paged, block_size: 1, prefix_caching: true, capacity_tokens: "
          "100000000}\n")),
      Catch::Contains("prefix caching handles at most 16777216 blocks"));
}

TEST_CASE(
    "prefix cache: with room for everything, the Mooncake conversation trace hits what "
    "its hash_ids repeat",
    "[core][prefix]") {
  // The first 600 s of the real trace (traces/data), a cache that never evicts. Independently of
  // the KV manager, count prompt tokens in hash blocks whose whole chain of ids (this one and
  // all before it) appeared in an earlier request, 512 tokens a block (the last one as long as
  // the prompt's tail). The simulated hit rate differs only by KV-block granularity (16 tokens)
  // and by the last prompt token, which is always computed: within 0.2 percentage points.
  const std::string path =
      std::string(SERVESIM_SOURCE_DIR) + "/traces/data/mooncake-fast25-conversation.jsonl";
  std::ifstream in(path);
  REQUIRE(in);
  std::set<std::vector<uint64_t>> seen;
  int64_t hit_tokens = 0, prompt_tokens = 0;
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line);
    if (row["timestamp"].get<int64_t>() >= 600000) break;
    const auto ids = row["hash_ids"].get<std::vector<uint64_t>>();
    const int64_t prompt = row["input_length"].get<int64_t>();
    std::vector<uint64_t> chain;
    bool matching = true;
    for (size_t i = 0; i < ids.size(); ++i) {
      chain.push_back(ids[i]);
      if (matching && seen.count(chain))
        hit_tokens += std::min<int64_t>(512, prompt - 512 * static_cast<int64_t>(i));
      else
        matching = false;
      seen.insert(chain);
    }
    prompt_tokens += prompt;
  }
  const double expected = static_cast<double>(hit_tokens) / static_cast<double>(prompt_tokens);

  const std::string yaml = "workload:\n  trace: {path: " + path +
                           "}\n  transform: {window_end_s: 600}\n"
                           "step_time: {kind: linear, base_ms: 10, per_prefill_token_ms: 0.001}\n"
                           "scheduler: {kind: continuous, max_num_seqs: 64, "
                           "max_num_batched_tokens: 16384, chunked_prefill: true}\n"
                           "kv: {policy: paged, block_size: 16, prefix_caching: true, "
                           "capacity_tokens: 32000000}\n";
  const RunOutput out = run_scenario(doc_of(yaml), /*check=*/false);
  REQUIRE(out.summary.prefix.has_value());
  CHECK(out.summary.prefix->evicted_blocks == 0);
  CHECK(out.summary.prefix->queried_tokens == prompt_tokens);  // no preemption, no recompute
  const double got = static_cast<double>(out.summary.prefix->hit_tokens) /
                     static_cast<double>(out.summary.prefix->queried_tokens);
  INFO("simulated " << got << ", from the hash_ids " << expected);
  CHECK(std::abs(got - expected) < 0.002);
  CHECK(expected > 0.2);  // the trace does share a lot: the test is not vacuous
}

}  // namespace t_core_kv_prefix_cache_test
