// The parallel engine sums its shards' prefix-cache figures (sim/parallel_engine.cpp, finish)
// into the sequential engine's: with prompts sharing leading blocks over three replicas, a KV
// small enough to evict, summary.json is the sequential engine's byte for byte on 2 and 3
// threads, and its prefix block counts what the requests say.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace t_sim_parallel_prefix_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("parallel prefix: the shards' prefix-cache figures add up to the sequential run's",
          "[sim][cluster][parallel]") {
  // 30 requests 2 ms apart, each sharing the first 1 to 5 blocks (of 4 tokens) of one of two
  // documents plus 0 to 6 tokens of its own; round robin over three replicas of 48 KV tokens.
  std::string rows;
  int64_t prompts = 0;
  for (int i = 0; i < 30; ++i) {
    const int doc = i % 2, blocks = 1 + (i * 7) % 5, own = (i * 5) % 7;
    std::string hashes;
    for (int b = 0; b < blocks; ++b) hashes += fmt::format("{}{}", b ? ";" : "", doc * 100 + b);
    rows += fmt::format("{},{},{},{}\n", i * 0.002, blocks * 4 + own, 2 + i % 3, hashes);
    prompts += blocks * 4 + own;
  }
  const std::string path =
      write_temp("trace.csv", "arrival_s,prompt_tokens,output_tokens,prefix_hash\n" + rows);
  const std::string yaml =
      "workload: {trace: {path: " + path +
      ", hash_block_tokens: 4}}\n"
      "step_time: {kind: linear, base_ms: 2, per_prefill_token_ms: 0.1}\n"
      "scheduler: {kind: continuous, max_num_seqs: 1}\n"
      "kv: {policy: paged, capacity_tokens: 48, block_size: 4, prefix_caching: true}\n"
      "cluster: {replicas: 3, router: {kind: round_robin, load_refresh_ms: 5}}\n";
  const auto run = [&](int threads) {
    RunOptions o;
    o.check = true;
    o.threads = threads;
    o.no_requests_csv = true;
    return run_scenario(doc_of(yaml), o);
  };
  const RunOutput seq = run(0);
  REQUIRE(seq.summary.prefix.has_value());
  const auto& p = *seq.summary.prefix;
  // One seat a replica and 48 KV tokens: nothing is preempted, so each request is looked up once.
  CHECK(p.queried_tokens == prompts);
  CHECK(p.hit_blocks > 0);
  CHECK(p.hit_tokens == p.hit_blocks * 4);
  CHECK(p.evicted_blocks > 0);
  for (const int threads : {2, 3}) {
    INFO("threads: " << threads);
    const RunOutput par = run(threads);
    CHECK(par.engine_notice.empty());
    CHECK(par.summary_json == seq.summary_json);
    REQUIRE(par.summary.prefix.has_value());
    CHECK(par.summary.prefix->queried_tokens == p.queried_tokens);
    CHECK(par.summary.prefix->queried_blocks == p.queried_blocks);
    CHECK(par.summary.prefix->hit_tokens == p.hit_tokens);
    CHECK(par.summary.prefix->hit_blocks == p.hit_blocks);
    CHECK(par.summary.prefix->evicted_blocks == p.evicted_blocks);
  }
}

}  // namespace t_sim_parallel_prefix_test
