// The step records a pipelined replica hands its step observers (sim/pipeline_engine.cpp): each
// micro-batch's prefill sequences, prefill tokens and decode tokens, worked by hand, and with one
// stage every field of the plain engine's records.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "models/step_time_model.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "sim/step_observer.h"
#include "tests/support.h"

namespace t_sim_pipeline_step_records_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Stage k takes stage_ms[k] + per_seq x sequences; the plain engine's step is their sum.
/// `stages` 0: not pipelined.
class Stages final : public StepTimeModel {
 public:
  Stages(std::vector<double> stage_ms, double per_seq, int32_t stages)
      : m_ms(std::move(stage_ms)), m_per_seq(per_seq), m_stages(stages) {}
  double step_ms(const StepShape& s) const override {
    double t = 0;
    for (double x : m_ms) t += x + m_per_seq * s.sequences;
    return t;
  }
  PipelineInfo pipeline() const override { return {m_stages, m_stages > 0}; }
  int32_t pipeline_stage_ms(const StepShape& s, std::span<double> out) const override {
    for (size_t k = 0; k < m_ms.size(); ++k) out[k] = m_ms[k] + m_per_seq * s.sequences;
    return 1;
  }

 private:
  std::vector<double> m_ms;
  double m_per_seq;
  int32_t m_stages;
};

struct Steps final : StepObserver {
  std::vector<StepRecord> steps;
  void on_step(const StepRecord& s) override { steps.push_back(s); }
};

std::vector<StepRecord> steps_of(const std::string& workload, const std::string& scheduler,
                                 std::shared_ptr<const StepTimeModel> model) {
  Scenario sc =
      build_scenario(doc_of("workload: {synthetic: " + workload +
                            "}\nstep_time: {kind: linear, base_ms: 1}\nscheduler: " + scheduler +
                            "\nkv: {policy: paged, capacity_tokens: 100000, block_size: 16}\n"));
  sc.components.replicas[0].step_time = std::move(model);
  Simulation sim(std::move(sc.components), /*check=*/true);
  Steps rec;
  sim.add_step_observer(rec);
  sim.run();
  return rec.steps;
}

}  // namespace

TEST_CASE("pipeline step records: each micro-batch's prefill and decode counts by hand",
          "[sim][pipeline]") {
  // Two stages, one request a batch; A at 0 and B at 1 ms, 8 prompt and 2 output tokens each:
  // the batches are A's prefill, B's prefill (8 tokens, no decode token each), then A's and B's
  // single decode (one decode token, no prefill each).
  const std::vector<StepRecord> s = steps_of(
      "{requests: 2, arrival: {kind: fixed, rate_per_s: 1000}, prompt_tokens: {kind: "
      "fixed, value: 8}, output_tokens: {kind: fixed, value: 2}}",
      "{kind: continuous, max_num_seqs: 1}",
      std::make_shared<Stages>(std::vector<double>{1, 2}, 0.0, 2));
  REQUIRE(s.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    INFO("batch " << i);
    const bool prefill = i < 2;
    CHECK(s[i].sequences == 1);
    CHECK(s[i].prefill_sequences == (prefill ? 1 : 0));
    CHECK(s[i].prefill_tokens == (prefill ? 8 : 0));
    CHECK(s[i].decode_tokens == (prefill ? 0 : 1));
  }
}

TEST_CASE("pipeline step records: one stage reports the plain engine's records field by field",
          "[sim][pipeline]") {
  const std::string load =
      "{requests: 80, arrival: {kind: poisson, rate_per_s: 40}, prompt_tokens: {kind: uniform, "
      "min: 10, max: 300}, output_tokens: {kind: uniform, min: 1, max: 40}}";
  // vLLM's continuous batching, and static batching, whose finished sequences keep their seats
  // as padding: counted in sequences, never as decode tokens.
  for (const std::string scheduler :
       {"{kind: vllm, enable_prefix_caching: false, max_num_seqs: 8, max_num_batched_tokens: 256}",
        "{kind: static, max_batch_size: 4}"}) {
    INFO(scheduler);
    const auto plain =
        steps_of(load, scheduler, std::make_shared<Stages>(std::vector<double>{3.7}, 0.13, 0));
    const auto piped =
        steps_of(load, scheduler, std::make_shared<Stages>(std::vector<double>{3.7}, 0.13, 1));
    REQUIRE(plain.size() == piped.size());
    int64_t decode_tokens = 0, padding = 0;
    for (size_t i = 0; i < plain.size(); ++i) {
      INFO("step " << i);
      CHECK(plain[i].start == piped[i].start);
      CHECK(plain[i].sequences == piped[i].sequences);
      CHECK(plain[i].prefill_sequences == piped[i].prefill_sequences);
      CHECK(plain[i].prefill_tokens == piped[i].prefill_tokens);
      CHECK(plain[i].decode_tokens == piped[i].decode_tokens);
      CHECK(plain[i].kv_used_tokens == piped[i].kv_used_tokens);
      CHECK(plain[i].waiting == piped[i].waiting);
      CHECK(plain[i].running == piped[i].running);
      decode_tokens += piped[i].decode_tokens;
      padding += piped[i].sequences - piped[i].prefill_sequences - piped[i].decode_tokens;
    }
    CHECK(decode_tokens > 0);
    CHECK((padding > 0) == (scheduler.find("static") != std::string::npos));
  }
}

}  // namespace t_sim_pipeline_step_records_test
