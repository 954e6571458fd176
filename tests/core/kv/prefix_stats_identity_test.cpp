// The prefix cache's figures (core/kv/kv_prefix_cache.cpp) against the requests': with nothing
// preempted, under every scheduler that caches prefixes, on a trace whose prompts share leading
// blocks, the summary's prefix block counts every admission's lookup once (its prompt tokens,
// its whole blocks), its hits are the tokens the requests skipped (whole blocks, never a prompt's
// last token), and the prefill tokens computed are the prompts less those hits.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "metrics/run_scenario.h"
#include "tests/support.h"

namespace t_core_kv_prefix_stats_identity_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// 16 requests 3 ms apart; each shares the first 1 to 6 blocks (of 4 tokens) of one of three
/// documents and adds 0 to 9 tokens of its own, so some prompts end exactly at a block's end.
std::string rows(uint32_t seed) {
  uint64_t x = seed * 69069u + 5;
  auto next = [&x](int n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  std::string out;
  for (int i = 0; i < 16; ++i) {
    const int doc = next(3), blocks = 1 + next(6), own = next(10);
    std::string hashes;
    for (int b = 0; b < blocks; ++b) hashes += fmt::format("{}{}", b ? ";" : "", doc * 100 + b);
    out += fmt::format("{},{},{},{}\n", i * 0.003, blocks * 4 + own, 1 + next(6), hashes);
  }
  return out;
}

}  // namespace

TEST_CASE("prefix stats identity: the cache's lookups and hits are the requests' own",
          "[core][kv][contract]") {
  const std::vector<std::string> schedulers = {
      "{kind: continuous, max_num_seqs: 4}",
      "{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 8, chunked_prefill: true}",
      "{kind: vllm, max_num_seqs: 4}",
      "{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 8}",
      "{kind: sglang, max_running_requests: 4, chunked_prefill_size: 8}",
      "{kind: sglang, max_running_requests: 4, chunked_prefill_size: -1, schedule_policy: lpm}",
      "{kind: trtllm, max_batch_size: 4, max_num_tokens: 64}",
  };
  int64_t hit_runs = 0;
  for (uint32_t seed = 1; seed <= 2; ++seed) {
    for (const std::string& sched : schedulers) {
      for (const int capacity : {100000, 64}) {
        INFO(sched << " / seed " << seed << " / capacity " << capacity);
        const std::string path = write_temp(
            "trace.csv", "arrival_s,prompt_tokens,output_tokens,prefix_hash\n" + rows(seed));
        const std::string yaml =
            "workload: {trace: {path: " + path +
            ", hash_block_tokens: 4}}\n"
            "step_time: {kind: linear, base_ms: 2, per_prefill_token_ms: 0.1}\n"
            "scheduler: " +
            sched +
            fmt::format(
                "\nkv: {{policy: paged, capacity_tokens: {}, block_size: 4, "
                "prefix_caching: true}}\n",
                capacity);
        RunOptions o;
        o.check = true;
        CollectingRecorder rec;
        o.request_recorders = {&rec};
        const RunOutput out = run_scenario(doc_of(yaml), o);
        const Summary& s = out.summary;
        REQUIRE(s.prefix.has_value());
        REQUIRE(rec.requests.size() == 16);
        int64_t prompts = 0, blocks = 0, cached = 0, preemptions = 0;
        for (const Request& r : rec.requests) {
          INFO("request " << r.spec.id);
          CHECK(r.cached_prompt_tokens % 4 == 0);
          if (r.preemptions == 0) CHECK(r.cached_prompt_tokens < r.spec.prompt_tokens);
          prompts += r.spec.prompt_tokens;
          blocks += r.spec.prompt_tokens / 4;
          cached += r.cached_prompt_tokens;
          preemptions += r.preemptions;
        }
        CHECK(s.finished == 16);
        if (preemptions > 0) continue;  // a recompute looks the prompt up again
        CHECK(s.prefix->queried_tokens == prompts);
        CHECK(s.prefix->queried_blocks == blocks);
        CHECK(s.prefix->hit_tokens == cached);
        CHECK(s.prefix->hit_blocks * 4 == cached);
        CHECK(s.prefill_tokens_computed == prompts - cached);
        if (capacity == 100000) CHECK(s.prefix->evicted_blocks == 0);
        hit_runs += cached > 0;
      }
    }
  }
  CHECK(hit_runs >= 15);
}

}  // namespace t_core_kv_prefix_stats_identity_test
