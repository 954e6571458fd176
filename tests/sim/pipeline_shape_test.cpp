// The pipeline engine (sim/pipeline_engine.cpp) builds each batch's step shape itself: with one
// stage its batches are the plain engine's steps, so every field of every shape it hands the
// model must be the plain engine's, chunked prefills (whose later chunks read the earlier ones'
// KV: prefill_context_tokens) and decodes of uneven lengths included.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/step_time_model.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "tests/support.h"

namespace t_sim_pipeline_shape_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// 2 ms plus 0.01 ms a sequence, one stage; keeps every shape the engine asks about. Both
/// engines ask cost() once a step.
class Keeping final : public StepTimeModel {
 public:
  explicit Keeping(bool micro) : m_micro(micro) {}
  double step_ms(const StepShape& s) const override { return 2 + 0.01 * s.sequences; }
  std::optional<StepCost> cost(const StepShape& s) const override {
    shapes.push_back(s);
    return std::nullopt;
  }
  PipelineInfo pipeline() const override { return {m_micro ? 1 : 0, m_micro}; }
  int32_t pipeline_stage_ms(const StepShape& s, std::span<double> out) const override {
    out[0] = step_ms(s);
    return 1;
  }
  mutable std::vector<StepShape> shapes;

 private:
  bool m_micro;
};

/// The shapes the model was asked about; the run's steps and prefill tokens computed.
std::vector<StepShape> shapes_of(const std::string& scheduler, bool micro, int64_t& steps,
                                 int64_t& prefill_tokens) {
  Scenario sc = build_scenario(doc_of(
      "workload: {synthetic: {requests: 120, arrival: {kind: poisson, rate_per_s: 60}, "
      "prompt_tokens: {kind: uniform, min: 10, max: 300}, output_tokens: {kind: uniform, min: 1, "
      "max: 40}}}\nstep_time: {kind: linear, base_ms: 1}\nscheduler: " +
      scheduler + "\nkv: {policy: paged, capacity_tokens: 100000, block_size: 16}\n"));
  auto model = std::make_shared<Keeping>(micro);
  sc.components.replicas[0].step_time = model;
  Simulation sim(std::move(sc.components), /*check=*/true);
  sim.run();
  steps = sim.stats().steps;
  prefill_tokens = sim.stats().prefill_tokens;
  return model->shapes;
}

}  // namespace

TEST_CASE("pipeline shape: one stage hands the model the plain engine's shapes, field by field",
          "[sim][pipeline]") {
  const std::string scheduler =
      GENERATE(std::string("{kind: vllm, enable_prefix_caching: false, max_num_seqs: 16, "
                           "max_num_batched_tokens: 64}"),
               std::string("{kind: sarathi, max_batch_size: 8, token_budget: 48}"));
  CAPTURE(scheduler);
  int64_t plain_steps = 0, piped_steps = 0, plain_prefill = 0, piped_prefill = 0;
  const std::vector<StepShape> plain = shapes_of(scheduler, false, plain_steps, plain_prefill);
  const std::vector<StepShape> piped = shapes_of(scheduler, true, piped_steps, piped_prefill);
  CHECK(plain.size() == static_cast<size_t>(plain_steps));
  CHECK(piped_steps == plain_steps);
  REQUIRE(plain.size() == piped.size());
  int64_t continued = 0, uneven = 0, prefill = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    CAPTURE(i);
    const StepShape& x = plain[i];
    const StepShape& y = piped[i];
    CHECK(x.sequences == y.sequences);
    CHECK(x.decode_sequences == y.decode_sequences);
    CHECK(x.prefill_tokens == y.prefill_tokens);
    CHECK(x.prefill_tokens_sq == y.prefill_tokens_sq);
    CHECK(x.prefill_context_tokens == y.prefill_context_tokens);
    CHECK(x.decode_context_tokens == y.decode_context_tokens);
    CHECK(x.decode_context_max == y.decode_context_max);
    CHECK(x.decode_context_min == y.decode_context_min);
    prefill += y.prefill_tokens;
    continued += x.prefill_context_tokens > 0;
    uneven += x.decode_context_max > x.decode_context_min;
  }
  // The run's prefill tokens computed (summary.json's prefill_tokens_computed) are its batches'.
  CHECK(piped_prefill == prefill);
  CHECK(plain_prefill == prefill);
  // The comparison covers what it is meant to: prompts of up to 300 tokens in chunks of at most
  // 64 (48) continue over several steps, and decodes of different lengths share steps.
  CHECK(continued > 0);
  CHECK(uneven > 0);
}

}  // namespace t_sim_pipeline_shape_test
