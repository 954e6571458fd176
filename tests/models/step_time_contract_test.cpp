// Contract tests run over every registered step-time model (models/step_time_model.h): the
// same shape gives the same time (also after other shapes: no state), every time is positive,
// and a step never gets shorter with more prompt tokens, more decode context or more decoding
// sequences. A model registered without a section here fails the first check.
#include <catch2/catch.hpp>
#include <map>

#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_step_time_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_src = SERVESIM_SOURCE_DIR;

const std::map<std::string, std::string>& sections() {
  static const std::map<std::string, std::string> s{
      {"layer_profile", "{kind: layer_profile, layers: 32, path: " + k_src +
                            "/configs/profiles/rtxpro6000-llama-3.1-8b-bf16-tp1}"},
      {"linear", "{kind: linear, base_ms: 1, per_seq_ms: 0.1, per_context_token_ms: 0.001}"},
      {"operator", "{kind: operator, model: " + k_src +
                       "/tests/data/aic-tiny/tiny-moe.yaml, hardware: h100-sxm, operators: "
                       "{source: tables, path: " +
                       k_src + "/tests/data/aic-tiny, gpu: tiny_gpu, engine: vllm}}"},
      {"roofline", "{kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}"},
      {"table", "{kind: table, points: [{batch: 1, ms: 6.3}, {batch: 8, ms: 9.3}]}"},
  };
  return s;
}

std::unique_ptr<StepTimeModel> model(const std::string& name) {
  auto doc = doc_of(sections().at(name));
  auto m = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return m;
}

StepShape decode(int32_t seqs, int64_t context_each) {
  StepShape s;
  s.sequences = s.decode_sequences = seqs;
  s.decode_context_tokens = seqs * context_each;
  s.decode_context_max = s.decode_context_min = context_each;
  return s;
}

StepShape prefill(int64_t tokens) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = tokens;
  s.prefill_tokens_sq = static_cast<double>(tokens) * static_cast<double>(tokens);
  return s;
}

}  // namespace

TEST_CASE("step-time contract: every registered model has a section", "[models][contract]") {
  for (const std::string& name : step_time_model_names()) {
    INFO(name);
    CHECK(sections().count(name) == 1);
  }
}

TEST_CASE("step-time contract: pure and positive over a grid of shapes", "[models][contract]") {
  for (const std::string& name : step_time_model_names()) {
    INFO(name);
    const auto m = model(name);
    const auto other = model(name);  // a second instance answers the same
    std::vector<StepShape> grid;
    for (int64_t t : {1, 17, 256, 2048}) grid.push_back(prefill(t));
    for (int32_t b : {1, 3, 16, 64})
      for (int64_t c : {1, 100, 4000}) grid.push_back(decode(b, c));
    std::vector<double> first;
    for (const StepShape& s : grid) first.push_back(m->step_ms(s));
    for (size_t i = grid.size(); i-- > 0;) {  // in reverse: no memory of the last call
      INFO(i);
      CHECK(first[i] > 0);
      CHECK(m->step_ms(grid[i]) == first[i]);
      CHECK(other->step_ms(grid[i]) == first[i]);
    }
  }
}

// Interpolated measurements carry their noise: a profiled 16-token prefill can time below a
// 1-token one. Those models promise no order; every other model must declare none here.
const std::map<std::string, bool> k_monotone{{"layer_profile", false},
                                             {"linear", true},
                                             {"operator", true},
                                             {"roofline", true},
                                             {"table", true}};

TEST_CASE("step-time contract: never shorter with more tokens, context or sequences",
          "[models][contract]") {
  for (const std::string& name : step_time_model_names()) {
    INFO(name);
    REQUIRE(k_monotone.count(name) == 1);  // a new model says whether it is monotone
    if (!k_monotone.at(name)) continue;
    const auto m = model(name);
    double last = 0;
    for (int64_t t : {1, 16, 64, 256, 1024, 4096}) {
      INFO("prefill " << t);
      const double ms = m->step_ms(prefill(t));
      CHECK(ms >= last);
      last = ms;
    }
    for (int32_t b : {1, 2, 8, 32}) {
      last = 0;
      for (int64_t c : {16, 256, 2048, 8192}) {
        INFO("decode " << b << " x " << c);
        const double ms = m->step_ms(decode(b, c));
        CHECK(ms >= last);
        last = ms;
      }
    }
    last = 0;
    for (int32_t b : {1, 2, 4, 8, 16, 64}) {
      INFO("batch " << b);
      const double ms = m->step_ms(decode(b, 512));
      CHECK(ms >= last);
      last = ms;
    }
  }
}

TEST_CASE("linear: each term adds exactly its coefficient times its count", "[models][contract]") {
  // 1 + 0.1 x seqs + 0.001 x decode context: 4 seqs of 250 -> 1 + 0.4 + 1.0 = 2.4 ms.
  const auto m = model("linear");
  CHECK(m->step_ms(decode(4, 250)) == Approx(2.4).epsilon(1e-12));
  CHECK(m->step_ms(decode(1, 1)) == Approx(1.101).epsilon(1e-12));
}

TEST_CASE("linear: the knee term charges only the tokens beyond knee_tokens", "[models]") {
  // 1 ms + 0.01 ms for each token past 100 (tokens = prompt tokens + decoding sequences), and
  // 0.001 ms per decode context token only in a step that also prefills.
  auto doc = doc_of(
      "{kind: linear, base_ms: 1, per_token_above_knee_ms: 0.01, knee_tokens: 100, "
      "per_mixed_context_token_ms: 0.001}");
  const auto m = make_step_time_model(Cfg::root(doc));
  CHECK(m->step_ms(prefill(50)) == Approx(1.0).epsilon(1e-12));
  CHECK(m->step_ms(prefill(100)) == Approx(1.0).epsilon(1e-12));  // at the knee: nothing
  CHECK(m->step_ms(prefill(101)) == Approx(1.01).epsilon(1e-12));
  CHECK(m->step_ms(prefill(300)) == Approx(3.0).epsilon(1e-12));
  StepShape mixed = prefill(60);  // 60 + 50 decoding = 110 tokens, 1000 context tokens read
  mixed.sequences = 51;
  mixed.decode_sequences = 50;
  mixed.decode_context_tokens = 1000;
  CHECK(m->step_ms(mixed) == Approx(1.0 + 0.1 + 1.0).epsilon(1e-12));
  // Decode only: no mixed-context charge; 120 sequences are 20 past the knee.
  CHECK(m->step_ms(decode(120, 10)) == Approx(1.2).epsilon(1e-12));
}

}  // namespace t_models_step_time_contract_test
