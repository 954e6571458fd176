// A contract on the step shape the engine hands its step-time model: with a linear model that
// charges for one shape field at a time, a run's busy time is a sum that depends on the workload
// alone, whatever the scheduler decides, when nothing is preempted or cached:
//   per_prefill_token_ms:    every prompt token is computed once,           sum of prompts;
//   per_context_token_ms:    decode j of a request reads its prompt + j tokens,
//                            sum of (out - 1) x prompt + (out - 1) x out / 2;
//   per_seq_ms (no chunking): each output token is one sequence of a step,  sum of outputs;
//   per_prefill_token_sq_ms (no chunking): one chunk a prompt,              sum of prompts^2;
// plus base_ms for each step. The same holds over several replicas, on the sequential and the
// parallel engine.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "metrics/run_scenario.h"
#include "tests/support.h"

namespace t_sim_step_shape_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

struct Variant {
  std::string scheduler;
  bool chunked = false;  ///< a prompt may take several chunks
};

std::vector<Variant> variants() {
  return {
      {"{kind: continuous, max_num_seqs: 4}"},
      {"{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 16, chunked_prefill: true}",
       true},
      {"{kind: orca, max_batch_size: 3}"},
      {"{kind: sarathi, max_batch_size: 4, token_budget: 16}", true},
      {"{kind: vllm, max_num_seqs: 4, enable_prefix_caching: false}"},
      {"{kind: vllm, max_num_seqs: 4, max_num_batched_tokens: 16, enable_prefix_caching: false}",
       true},
      {"{kind: vllm, version: \"0.6.6\", max_num_seqs: 4, max_num_batched_tokens: 64, "
       "enable_prefix_caching: false}"},
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: -1}"},
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: 16}", true},
      {"{kind: sglang, max_running_requests: 4, chunked_prefill_size: 16, enable_mixed_chunk: "
       "true}",
       true},
      {"{kind: trtllm, max_batch_size: 4, max_num_tokens: 64}"},
      {"{kind: trtllm, max_batch_size: 4, max_num_tokens: 16, enable_chunked_context: true}", true},
  };
}

/// 12 requests, prompts of 1 to 50 tokens, 1 to 20 output tokens, arrivals 0 to 4 ms apart.
struct Workload {
  std::string rows;
  int64_t prompts = 0, outputs = 0, prompts_sq = 0, contexts = 0;
};

Workload workload(uint32_t seed) {
  uint64_t x = seed * 40503u + 17;
  auto next = [&x](int n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  Workload w;
  int at_ms = 0;
  for (int i = 0; i < 12; ++i) {
    at_ms += next(5);
    const int64_t p = 1 + next(50), o = 1 + next(20);
    w.rows += fmt::format("{},{},{}\n", at_ms * 0.001, p, o);
    w.prompts += p;
    w.outputs += o;
    w.prompts_sq += p * p;
    w.contexts += (o - 1) * p + (o - 1) * o / 2;
  }
  return w;
}

struct Totals {
  int64_t steps = 0, busy_ns = 0, preemptions = 0, requests = 0;
};

Totals run(const std::string& yaml, int threads = 0) {
  RunOptions o;
  o.check = true;
  o.threads = threads;
  const RunOutput out = run_scenario(doc_of(yaml), o);
  INFO(out.engine_notice);
  CHECK(out.engine_notice.empty());
  const Summary& s = out.summary;
  const double busy_s =
      s.busy_share * s.duration_s * static_cast<double>(std::max<size_t>(1, s.replicas.size()));
  Totals t{s.steps, std::llround(busy_s * 1e9), s.preemptions, s.finished};
  return t;
}

}  // namespace

TEST_CASE("step shape contract: a linear model's busy time is the workload's sum per field",
          "[sim][contract]") {
  const std::string kv = "{policy: paged, capacity_tokens: 100000, block_size: 4}";
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Workload w = workload(seed);
    for (const Variant& v : variants()) {
      INFO(v.scheduler << " / seed " << seed);
      struct Field {
        const char* key;
        int64_t sum;
        bool needs_whole_prompts;
      };
      for (const Field& f :
           {Field{"per_prefill_token_ms", w.prompts, false},
            Field{"per_context_token_ms", w.contexts, false}, Field{"per_seq_ms", w.outputs, true},
            Field{"per_prefill_token_sq_ms", w.prompts_sq, true}}) {
        if (f.needs_whole_prompts && v.chunked) continue;
        INFO(f.key);
        // 1 ms a step plus 1 ms a unit of the field: every step's time is a whole number of ms.
        const std::string step = fmt::format("{{kind: linear, base_ms: 1, {}: 1}}", f.key);
        Scenario sc = build_scenario(doc_of(trace_scenario(w.rows, step, v.scheduler, kv)));
        Simulation sim(std::move(sc.components), /*check=*/true);
        CollectingRecorder rec;
        sim.add_recorder(rec);
        sim.run();
        const RunStats& st = sim.stats();
        REQUIRE(rec.requests.size() == 12);
        int64_t preemptions = 0;
        for (const Request& r : rec.requests) preemptions += r.preemptions;
        REQUIRE(preemptions == 0);
        CHECK(st.busy_ns == ms(1) * (st.steps + f.sum));
      }
    }
  }
}

TEST_CASE("step shape contract: the same sums over three replicas on the parallel engine",
          "[sim][contract]") {
  const std::string kv = "{policy: paged, capacity_tokens: 100000, block_size: 4}";
  const Workload w = workload(7);
  for (const char* key : {"per_prefill_token_ms", "per_context_token_ms", "per_seq_ms"}) {
    INFO(key);
    const int64_t sum = std::string(key) == "per_prefill_token_ms"   ? w.prompts
                        : std::string(key) == "per_context_token_ms" ? w.contexts
                                                                     : w.outputs;
    const std::string yaml =
        trace_scenario(w.rows, fmt::format("{{kind: linear, base_ms: 1, {}: 1}}", key),
                       "{kind: continuous, max_num_seqs: 4}", kv) +
        "cluster: {replicas: 3, router: {kind: round_robin, load_refresh_ms: 5}}\n";
    for (int threads : {0, 2}) {
      INFO("threads " << threads);
      const Totals t = run(yaml, threads);
      CHECK(t.requests == 12);
      CHECK(t.preemptions == 0);
      CHECK(t.busy_ns == ms(1) * (t.steps + sum));
    }
  }
}

}  // namespace t_sim_step_shape_contract_test
