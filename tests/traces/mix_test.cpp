// workload.mix (traces/mix.cpp): the merge order, the ties, the renumbering, the classes and
// priorities it gives, the components' seeds, and each rejection.
#include <catch2/catch.hpp>

#include "tests/traces/trace_test_support.h"
#include "traces/trace_rows.h"

namespace t_traces_mix_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string mix_error(const std::string& yaml) {
  try {
    (void)drain(*workload_of(yaml));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const std::string k_synthetic =
    "synthetic: {requests: 5, arrival: {kind: poisson, rate_per_s: 5}, prompt_tokens: {kind: "
    "uniform, min: 1, max: 1000}, output_tokens: {kind: uniform, min: 1, max: 1000}}";

}  // namespace

TEST_CASE("mix: merged by arrival, ties by component then its own order, ids renumbered",
          "[traces]") {
  // chat: t=0 (10 tokens), t=0.5 (20), t=0.5 (7), t=2 (100); its rows name a class of their own,
  // which the component's name replaces, and priority 2 replaces theirs.
  // batch: t=0 (1), t=0.5 (2), t=1 (3), with priorities 7, 7 and none (0), kept.
  const std::string chat = write_temp("mix-chat.csv",
                                      "arrival_s,prompt_tokens,output_tokens,class,priority\n"
                                      "0,10,5,x,9\n0.5,20,3,x,9\n0.5,7,1,y,9\n2,100,40,x,9\n");
  const std::string batch = write_temp("mix-batch.csv",
                                       "arrival_s,prompt_tokens,output_tokens,priority\n"
                                       "0,1,1,7\n0.5,2,2,7\n1,3,3,\n");
  auto source = workload_of("mix: {components: [{name: chat, priority: 2, trace: {path: " + chat +
                            "}},\n  {name: batch, trace: {path: " + batch + "}}]}\n");
  const std::vector<RequestSpec> r = drain(*source);
  // t=0: chat before batch (component order); t=0.5: chat 20, chat 7 (its own order), batch 2.
  CHECK(ids(r) == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(arrivals_ns(r) == std::vector<int64_t>{0, 0, 500'000'000, 500'000'000, 500'000'000,
                                               1'000'000'000, 2'000'000'000});
  std::vector<int32_t> prompts, priorities;
  std::vector<uint16_t> classes;
  for (const RequestSpec& s : r) {
    prompts.push_back(s.prompt_tokens);
    priorities.push_back(s.priority);
    classes.push_back(s.class_id);
  }
  CHECK(prompts == std::vector<int32_t>{10, 1, 20, 7, 2, 3, 100});
  CHECK(classes == std::vector<uint16_t>{0, 1, 0, 0, 1, 1, 0});
  CHECK(priorities == std::vector<int32_t>{2, 7, 2, 2, 7, 0, 2});
  CHECK(source->class_names() == std::vector<std::string>{"chat", "batch"});
  CHECK(source->size_hint() == 0);  // a streamed trace does not know its length: nor does the mix
  // With every component's length known (a sorted trace: 4 and 3), the mix's is their sum.
  CHECK(workload_of("mix: {components: [{name: a, trace: {path: " + chat +
                    ", sort: true}}, {name: b, trace: {path: " + batch + ", sort: true}}]}\n")
            ->size_hint() == 7);
}

TEST_CASE("mix: each component draws with a seed of its own from the run's", "[traces]") {
  // SplitMix64's first two outputs from state 0 (its published test values).
  CHECK(mix_component_seed(0, 0) == 0xe220a8397b1dcdafull);
  CHECK(mix_component_seed(0, 1) == 0x6e789e6aa1b965f4ull);
  // Component 1's requests are the synthetic source's own under seed mix_component_seed(7, 1),
  // whatever component 0 is; two alike components draw different lengths.
  auto mixed = drain(*workload_of(
      "mix: {components: [{name: a, " + k_synthetic + "},\n  {name: b, " + k_synthetic + "}]}\n",
      7));
  auto alone = drain(*workload_of(k_synthetic + "\n", mix_component_seed(7, 1)));
  auto first = drain(*workload_of(k_synthetic + "\n", mix_component_seed(7, 0)));
  std::vector<int32_t> from_b, from_a, want_b, want_a;
  for (const RequestSpec& s : mixed) (s.class_id == 1 ? from_b : from_a).push_back(s.prompt_tokens);
  for (const RequestSpec& s : alone) want_b.push_back(s.prompt_tokens);
  for (const RequestSpec& s : first) want_a.push_back(s.prompt_tokens);
  CHECK(from_b == want_b);
  CHECK(from_a == want_a);
  CHECK(from_a != from_b);
}

TEST_CASE("mix: bad components name the key and what is allowed", "[traces]") {
  CHECK_THAT(mix_error("mix: {components: [{" + k_synthetic + "}]}\n"),
             Catch::Contains("workload.mix.components[0].name"));
  CHECK_THAT(mix_error("mix: {components: [{name: a, " + k_synthetic + "}, {name: a, " +
                       k_synthetic + "}]}\n"),
             Catch::Contains("\"a\" is also the name of components[0]"));
  CHECK_THAT(mix_error("mix: {components: [{name: \"a b\", " + k_synthetic + "}]}\n"),
             Catch::Contains("1 to 64 characters from A-Z, a-z, 0-9, '_', '-' and '.'"));
  CHECK_THAT(
      mix_error("mix: {components: [{name: a, priority: 1000000001, " + k_synthetic + "}]}\n"),
      Catch::Contains("workload.mix.components[0].priority"));
  CHECK_THAT(mix_error("mix: {components: [{name: a, colour: red, " + k_synthetic + "}]}\n"),
             Catch::Contains("colour"));
  CHECK_THAT(mix_error("mix: {components: [{name: a, closed_loop: {users: 2, requests: 4, "
                       "think_s: 1, prompt_tokens: {kind: fixed, value: 5}, output_tokens: "
                       "{kind: fixed, value: 5}}}]}\n"),
             Catch::Contains("workload.mix.components[0].closed_loop"));
  CHECK_THAT(mix_error("mix: {components: []}\n"), Catch::Contains("non-empty list of maps"));
}

}  // namespace t_traces_mix_test
