// Pipeline micro-batches scheduled by the engine (sim/pipeline_engine.h): a two-stage timeline
// and bubble worked by hand, P = 1 the plain engine's steps exactly, a request never in two
// batches in flight, tokens conserved under --check, and the combinations refused.
#include "sim/pipeline_engine.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/errors.h"
#include "models/step_time_model.h"
#include "sim/recorder.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "sim/step_observer.h"
#include "tests/support.h"

namespace t_sim_pipeline_engine_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Stage k takes stage_ms[k] + per_seq x sequences, whatever the shape else; step_ms (the
/// plain engine's) is the stages' sum. `stages` 0: not pipelined.
class Stages final : public StepTimeModel {
 public:
  Stages(std::vector<double> stage_ms, double per_seq, int32_t stages, bool micro)
      : m_ms(std::move(stage_ms)), m_per_seq(per_seq), m_stages(stages), m_micro(micro) {}
  double step_ms(const StepShape& s) const override {
    double t = 0;
    for (double x : m_ms) t += x + m_per_seq * s.sequences;
    return t;
  }
  PipelineInfo pipeline() const override { return {m_stages, m_micro}; }
  int32_t pipeline_stage_ms(const StepShape& s, std::span<double> out) const override {
    for (size_t k = 0; k < m_ms.size(); ++k) out[k] = m_ms[k] + m_per_seq * s.sequences;
    return 1;
  }

 private:
  std::vector<double> m_ms;
  double m_per_seq;
  int32_t m_stages;
  bool m_micro;
};

struct Recorded final : RequestRecorder, StepObserver {
  std::vector<Request> requests;
  std::vector<StepRecord> steps;
  void record(const Request& r) override { requests.push_back(r); }
  void on_step(const StepRecord& s) override { steps.push_back(s); }
};

Components components(const std::string& workload, const std::string& scheduler,
                      std::shared_ptr<const StepTimeModel> model) {
  Scenario sc =
      build_scenario(doc_of("workload: {synthetic: " + workload +
                            "}\nstep_time: {kind: linear, base_ms: 1}\nscheduler: " + scheduler +
                            "\nkv: {policy: paged, capacity_tokens: 100000, "
                            "block_size: 16}\n"));
  sc.components.replicas[0].step_time = std::move(model);
  return std::move(sc.components);
}

const std::string k_two =
    "{requests: 2, arrival: {kind: fixed, rate_per_s: 1000}, prompt_tokens: {kind: fixed, value: "
    "8}, output_tokens: {kind: fixed, value: 2}}";

double ms(Time t) { return static_cast<double>(t.count_ns()) / 1e6; }

/// An observer of step ends only (as the metrics recorder is): the engine calls on_step_end.
struct Ends final : StepObserver {
  std::vector<Time> ends;
  void on_step(const StepRecord&) override {}
  void on_step_end(uint32_t, Time end, int64_t) override { ends.push_back(end); }
  [[nodiscard]] bool ends_only() const override { return true; }
};

}  // namespace

TEST_CASE("pipeline engine: two stages, two requests, each batch's timeline and the bubble",
          "[sim][pipeline]") {
  // Stage 0 takes 1 ms, stage 1 2 ms; one request a batch (max_num_seqs 1). A arrives at 0, B
  // at 1 ms; each prefills (first token) then decodes once.
  //   batch 1, A prefill: stage 0 [0, 1], stage 1 [1, 3]
  //   batch 2, B prefill: planned when stage 0 frees at 1: [1, 2], then waits for stage 1: [3, 5]
  //   at 2 stage 0 is free but two batches are in flight (P = 2): nothing starts
  //   batch 3, A decode: planned when batch 1 leaves at 3: [3, 4], [5, 7]
  //   batch 4, B decode: planned when batch 2 leaves at 5: [5, 6], [7, 9]
  // A's tokens at 3 and 7, B's at 5 and 9. Stage 0 busy 4 ms, stage 1 8, of 9 ms with a batch in
  // flight: bubble 1 - 12 / (2 x 9) = 1/3; trips 3 + 4 + 4 + 4 = 15 ms: 15 / 9 in flight.
  Recorded rec;
  Simulation sim(components(k_two, "{kind: continuous, max_num_seqs: 1}",
                            std::make_shared<Stages>(std::vector<double>{1, 2}, 0.0, 2, true)),
                 /*check=*/true);
  Ends ends;
  sim.add_recorder(rec);
  sim.add_step_observer(rec);
  sim.add_step_observer(ends);
  sim.run();
  REQUIRE(rec.steps.size() == 4);
  // An observer of ends alone hears each batch's exit from the last stage: 3, 5, 7, 9 ms.
  REQUIRE(ends.ends.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(ms(ends.ends[i]) == 3.0 + 2.0 * static_cast<double>(i));
  const std::vector<std::pair<double, double>> timeline{{0, 3}, {1, 4}, {3, 4}, {5, 4}};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(ms(rec.steps[i].start) == timeline[i].first);
    CHECK(ms(rec.steps[i].duration) == timeline[i].second);
  }
  REQUIRE(rec.requests.size() == 2);
  const Request& a = rec.requests[0].spec.id == 0 ? rec.requests[0] : rec.requests[1];
  const Request& b = rec.requests[0].spec.id == 0 ? rec.requests[1] : rec.requests[0];
  CHECK(ms(a.first_token) == 3);
  CHECK(ms(a.finish) == 7);
  CHECK(ms(b.first_token) == 5);
  CHECK(ms(b.finish) == 9);
  CHECK(sim.stats().replicas[0].busy_ns == 9'000'000);
  // The accelerators' active time: each batch's stage times over the 2 stages, (1 + 2) / 2 ms.
  CHECK(sim.stats().replicas[0].active_s == Approx(4 * 1.5e-3).epsilon(1e-12));
  const auto p = pipeline_summary(sim.stats().replicas);
  REQUIRE(p);
  CHECK(p->schedule == "micro_batches");
  CHECK(p->stages == 2);
  CHECK(p->bubble == Approx(1.0 / 3));
  CHECK(p->micro_batches_in_flight == Approx(15.0 / 9));
  REQUIRE(p->stage_busy.size() == 2);
  CHECK(p->stage_busy[0].busy_share == Approx(4.0 / 9));
  CHECK(p->stage_busy[1].busy_share == Approx(8.0 / 9));
}

TEST_CASE("pipeline engine: a stage shorter than the clock's nanosecond takes one",
          "[sim][pipeline]") {
  // Two stages of 0.1 ns each (1e-7 ms, which rounds to 0 ns): each stage still takes 1 ns, as
  // a plain step does, so A's prefill batch leaves at 2 ns and its decode batch at 4 ns.
  Recorded rec;
  Simulation sim(
      components(k_two, "{kind: continuous, max_num_seqs: 1}",
                 std::make_shared<Stages>(std::vector<double>{1e-7, 1e-7}, 0.0, 2, true)),
      /*check=*/true);
  sim.add_recorder(rec);
  sim.add_step_observer(rec);
  sim.run();
  REQUIRE(rec.requests.size() == 2);
  const Request& a = rec.requests[0].spec.id == 0 ? rec.requests[0] : rec.requests[1];
  CHECK(a.first_token.count_ns() == 2);
  CHECK(a.finish.count_ns() == 4);
  REQUIRE(rec.steps.size() == 4);
  for (const StepRecord& s : rec.steps) CHECK(s.duration.count_ns() == 2);
  CHECK(sim.stats().replicas[0].stage_busy_ns == std::vector<int64_t>{4, 4});
}

TEST_CASE("pipeline engine: one stage gives the plain engine's run exactly", "[sim][pipeline]") {
  const std::string load =
      "{requests: 300, arrival: {kind: poisson, rate_per_s: 40}, prompt_tokens: {kind: uniform, "
      "min: 10, max: 400}, output_tokens: {kind: uniform, min: 1, max: 60}}";
  const std::string vllm =
      "{kind: vllm, enable_prefix_caching: false, max_num_seqs: 16, max_num_batched_tokens: 512}";
  const auto run = [&](bool micro) {
    auto rec = std::make_unique<Recorded>();
    Simulation sim(
        components(load, vllm,
                   std::make_shared<Stages>(std::vector<double>{3.7}, 0.13, micro ? 1 : 0, micro)),
        /*check=*/true);
    sim.add_recorder(*rec);
    sim.add_step_observer(*rec);
    sim.run();
    CHECK(sim.stats().replicas[0].pipeline_stages == (micro ? 1 : 0));
    CHECK(sim.stats().busy_ns > 0);
    return std::make_pair(std::move(rec), sim.stats().busy_ns);
  };
  const auto [plain, plain_busy] = run(false);
  const auto [piped, piped_busy] = run(true);
  CHECK(plain_busy == piped_busy);
  REQUIRE(plain->requests.size() == piped->requests.size());
  for (size_t i = 0; i < plain->requests.size(); ++i) {
    const Request& x = plain->requests[i];
    const Request& y = piped->requests[i];
    CHECK(x.spec.id == y.spec.id);
    CHECK(x.first_token == y.first_token);
    CHECK(x.last_token == y.last_token);
    CHECK(x.finish == y.finish);
    CHECK(x.generated_tokens == y.generated_tokens);
    CHECK(x.preemptions == y.preemptions);
  }
  REQUIRE(plain->steps.size() == piped->steps.size());
  for (size_t i = 0; i < plain->steps.size(); ++i) {
    CHECK(plain->steps[i].start == piped->steps[i].start);
    CHECK(plain->steps[i].duration == piped->steps[i].duration);
    CHECK(plain->steps[i].sequences == piped->steps[i].sequences);
  }
}

TEST_CASE("pipeline engine: a request is never in two batches in flight", "[sim][pipeline]") {
  // One request of 5 tokens through stages of 1 and 2 ms: each of its 5 batches (a prefill, 4
  // decodes) must leave the last stage before the next is planned, so it ends at 5 x 3 ms, not
  // sooner, though stage 0 frees after 1 ms each time.
  Recorded rec;
  Simulation sim(
      components("{requests: 1, arrival: {kind: fixed, rate_per_s: 1}, prompt_tokens: {kind: "
                 "fixed, value: 8}, output_tokens: {kind: fixed, value: 5}}",
                 "{kind: continuous, max_num_seqs: 256}",
                 std::make_shared<Stages>(std::vector<double>{1, 2}, 0.0, 2, true)),
      /*check=*/true);
  sim.add_recorder(rec);
  sim.run();
  REQUIRE(rec.requests.size() == 1);
  CHECK(ms(rec.requests[0].finish) == 15);
  CHECK(sim.stats().steps == 5);
  const auto p = pipeline_summary(sim.stats().replicas);
  REQUIRE(p);
  CHECK(p->micro_batches_in_flight == Approx(1.0));
  CHECK(p->bubble == Approx(0.5));  // 15 ms of stage time in 2 x 15
}

TEST_CASE("pipeline engine: tokens are conserved with several batches in flight under --check",
          "[sim][pipeline]") {
  const std::string load =
      "{requests: 400, arrival: {kind: poisson, rate_per_s: 400}, prompt_tokens: {kind: uniform, "
      "min: 10, max: 300}, output_tokens: {kind: uniform, min: 1, max: 80}}";
  Recorded rec;
  Simulation sim(
      components(load,
                 "{kind: vllm, enable_prefix_caching: false, max_num_seqs: 32, "
                 "max_num_batched_tokens: 512}",
                 std::make_shared<Stages>(std::vector<double>{1, 1.2, 0.9, 1}, 0.02, 4, true)),
      /*check=*/true);
  sim.add_recorder(rec);
  sim.run();
  REQUIRE(rec.requests.size() == 400);
  int64_t asked = 0, produced = 0;
  for (const Request& r : rec.requests) {
    CHECK(r.state == RequestState::Released);
    asked += r.spec.output_tokens;
    produced += r.generated_tokens;
  }
  CHECK(produced == asked);
  const auto p = pipeline_summary(sim.stats().replicas);
  REQUIRE(p);
  CHECK(p->micro_batches_in_flight > 2.5);  // the pipeline did fill
  CHECK(p->bubble >= 0);
  CHECK(p->bubble < 0.5);
}

TEST_CASE("pipeline engine: micro_batches with what it does not model is refused at the key",
          "[sim][pipeline]") {
  const std::string base =
      "workload: {synthetic: " + k_two +
      "}\n"
      "scheduler: {kind: vllm, enable_prefix_caching: "
      "false}\n"
      "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, pipeline_parallel: 2, "
      "pipeline_schedule: ";
  const std::string kv = "kv: {policy: paged, capacity_tokens: 100000, block_size: 16}\n";
  CHECK_THROWS_WITH(build_scenario(doc_of(base + "eager}\n" + kv)),
                    Catch::Contains("pipeline_schedule") && Catch::Contains("micro_batches"));
  CHECK_NOTHROW(build_scenario(doc_of(base + "micro_batches}\n" + kv)));
  CHECK_THROWS_WITH(
      build_scenario(doc_of(base + "micro_batches}\n" + kv + "admission: {queue_cap: 10}\n")),
      Catch::Contains("pipeline_schedule") && Catch::Contains("admission or abandonment"));
}

}  // namespace t_sim_pipeline_engine_test
