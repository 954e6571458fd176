// Bad configs get a message naming the key, where it is, the value and what is allowed.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_core_config_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_good = R"(workload:
  synthetic:
    requests: 10
    arrival: {kind: poisson, rate_per_s: 2}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: uniform, min: 1, max: 5}
step_time:
  kind: table
  points: [{batch: 1, ms: 6.3}, {batch: 8, ms: 9.3}]
scheduler:
  kind: continuous
  max_num_seqs: 8
kv:
  policy: paged
  capacity_tokens: 1000
  block_size: 16
seed: 1
)";

std::string error_of(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    auto doc = doc_of(yaml);
    for (const auto& s : sets) doc->apply_override(s);
    (void)build_scenario(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

}  // namespace

TEST_CASE("config: the good config builds", "[core][config]") {
  CHECK(error_of(k_good) == "no error");
}

TEST_CASE("config: an unknown key names itself, its line, a suggestion and the valid keys",
          "[core][config]") {
  const auto msg =
      error_of(replace(k_good, "max_num_seqs: 8", "max_num_seqs: 8\n  max_num_seq: 4"));
  CHECK_THAT(msg, Catch::Contains("scheduler.max_num_seq at test.yaml:13:3: unknown key"));
  CHECK_THAT(msg, Catch::Contains("did you mean max_num_seqs?"));
  CHECK_THAT(msg, Catch::Contains("valid here: chunked_prefill, fair, kind, kv_bytes_per_token, "
                                  "max_num_batched_tokens, max_num_seqs, policy, preemption_mode"));
}

TEST_CASE("config: an unknown top-level section is rejected", "[core][config]") {
  CHECK_THAT(error_of(k_good + "sedd: 3\n"),
             Catch::Contains("sedd at test.yaml:18:1: unknown key (did you mean seed?)"));
}

TEST_CASE("config: an unknown scheduler kind lists the valid ones", "[core][config]") {
  CHECK_THAT(error_of(replace(k_good, "kind: continuous", "kind: contiuous")),
             Catch::Contains("scheduler.kind = \"contiuous\" at test.yaml:11:9: unknown "
                             "\"contiuous\" (did you mean continuous?) (valid: continuous, "
                             "dynamic, orca, sarathi, sglang, static, trtllm, vllm)"));
}

TEST_CASE("config: wrong types and impossible values", "[core][config]") {
  CHECK_THAT(
      error_of(replace(k_good, "max_num_seqs: 8", "max_num_seqs: eight")),
      Catch::Contains("scheduler.max_num_seqs = \"eight\" at test.yaml:12:17: must be an integer"));
  CHECK_THAT(error_of(replace(k_good, "max_num_seqs: 8", "max_num_seqs: 0")),
             Catch::Contains(
                 "scheduler.max_num_seqs = \"0\" at test.yaml:12:17: must be an integer from 1"));
  CHECK_THAT(error_of(replace(k_good, "max_num_seqs: 8", "max_num_seqs: 2.5")),
             Catch::Contains("must be an integer"));
  CHECK_THAT(error_of(replace(k_good, "ms: 6.3", "ms: -1")),
             Catch::Contains("step_time.points[0].ms = \"-1\" at test.yaml:9:27: must be > 0"));
  CHECK_THAT(error_of(replace(k_good, "rate_per_s: 2", "rate_per_s: .nan")),
             Catch::Contains("workload.synthetic.arrival.rate_per_s"));
  CHECK_THAT(error_of(replace(k_good, "capacity_tokens: 1000", "capacity_tokens: [1]")),
             Catch::Contains("kv.capacity_tokens = a list at test.yaml:15:20: must be an integer"));
  CHECK_THAT(error_of(replace(k_good, "{kind: uniform, min: 1, max: 5}",
                              "{kind: uniform, min: 5, max: 1}")),
             Catch::Contains("workload.synthetic.output_tokens.max = \"1\""));
  CHECK_THAT(error_of(replace(k_good, "block_size: 16", "block_size: 2000")),
             Catch::Contains("kv.block_size = \"2000\" at test.yaml:16:15: must not exceed the KV "
                             "capacity (1000 tokens)"));
}

TEST_CASE("config: table points must increase", "[core][config]") {
  CHECK_THAT(error_of(replace(k_good, "{batch: 8, ms: 9.3}", "{batch: 1, ms: 9.3}")),
             Catch::Contains("step_time.points[1].batch = \"1\""));
}

TEST_CASE("config: missing sections and keys are named", "[core][config]") {
  CHECK_THAT(error_of(replace(k_good, "    requests: 10\n", "")),
             Catch::Contains("workload.synthetic.requests: required key missing"));
  CHECK_THAT(error_of("seed: 1\n"), Catch::Contains("kv: required key missing in the top level"));
}

TEST_CASE("config: exactly one workload source and one KV capacity", "[core][config]") {
  CHECK_THAT(error_of(replace(k_good, "  capacity_tokens: 1000\n", "")),
             Catch::Contains("needs exactly one of capacity_tokens, memory"));
  CHECK_THAT(
      error_of(replace(k_good, "  synthetic:", "  synthetc:")),
      Catch::Contains("needs exactly one of closed_loop, mix, servegen, synthetic, trace: found "
                      "synthetc (did you mean synthetic?)"));
}

TEST_CASE("config: cross-field rules name both keys", "[core][config]") {
  CHECK_THAT(
      error_of(replace(k_good, "max_num_seqs: 8", "max_num_seqs: 8\n  chunked_prefill: true")),
      Catch::Contains("chunked_prefill: true needs scheduler.max_num_batched_tokens"));
}

TEST_CASE("config: --set overrides go through the same checks", "[core][config]") {
  CHECK(error_of(k_good, {"scheduler.max_num_seqs=4"}) == "no error");
  CHECK_THAT(error_of(k_good, {"scheduler.max_num_seqs=-4"}),
             Catch::Contains("scheduler.max_num_seqs = \"-4\" at test.yaml (from --set "
                             "scheduler.max_num_seqs): must be"));
  CHECK_THAT(
      error_of(k_good, {"scheduler.max_num_sqs=4"}),
      Catch::Contains(
          "scheduler.max_num_sqs at test.yaml (from --set scheduler.max_num_sqs): unknown key"));
  CHECK_THAT(error_of(k_good, {"scheduler.kind.x=1"}),
             Catch::Contains("is \"continuous\", not a map"));
  CHECK_THAT(error_of(k_good, {"novalue"}), Catch::Contains("expected key.path=value"));
}

TEST_CASE("config: KV capacity from accelerator memory", "[core][config][kv]") {
  // Llama-2 13B in 16-bit: 40 layers x 40 KV heads x 128 = 819,200 bytes of KV per token.
  // 80 GiB x 0.9 - 13.0e9 x 2 bytes = 51.31e9 bytes -> 62,634 tokens (about 30 conversations of
  // 2,048 tokens).
  auto doc = doc_of(replace(k_good, "capacity_tokens: 1000",
                            "memory: {accelerator_gib: 80, utilization: 0.9, parameters: 13.0e9,"
                            " layers: 40, kv_heads: 40, head_dim: 128}"));
  Scenario sc = build_scenario(doc);
  const double usable = 80.0 * 1073741824.0 * 0.9 - 26.0e9;
  CHECK(sc.components.replicas[0].kv->capacity_tokens() ==
        static_cast<int64_t>(usable / 819200.0) / 16 * 16);
  CHECK_THAT(error_of(replace(k_good, "capacity_tokens: 1000",
                              "memory: {accelerator_gib: 16, parameters: 13.0e9, layers: 40, "
                              "kv_heads: 40, head_dim: 128}")),
             Catch::Contains("the weights (26.00 GB) do not fit"));
}

TEST_CASE("config: malformed YAML names the line", "[core][config]") {
  CHECK_THAT(error_of("scheduler: {kind: static\n"), Catch::Contains("test.yaml:"));
  CHECK_THAT(error_of("- 1\n- 2\n"), Catch::Contains("the top level must be a map"));
}

TEST_CASE("config: --set of a section's kind drops the old kind's keys and says so",
          "[core][config]") {
  const auto built = [](const std::vector<std::string>& sets) {
    auto doc =
        doc_of(replace(k_good, "max_num_seqs: 8", "max_num_seqs: 8\n  chunked_prefill: false"));
    for (const auto& s : sets) doc->apply_override(s);
    (void)build_scenario(doc);
    return doc;
  };
  // continuous -> static: static reads max_batch_size only; both continuous keys go.
  auto doc = built({"scheduler.kind=static", "scheduler.max_batch_size=4"});
  CHECK(doc->notes() ==
        std::vector<std::string>{
            "--set scheduler.kind=static: dropped scheduler.max_num_seqs, a key of kind "
            "continuous that kind static does not have",
            "--set scheduler.kind=static: dropped scheduler.chunked_prefill, a key of kind "
            "continuous that kind static does not have"});
  // The document (summary.json's resolved config) no longer holds them.
  const YAML::Node scheduler = doc->root()["scheduler"];
  CHECK(scheduler.size() == 2);
  CHECK(scheduler["kind"].Scalar() == "static");
  CHECK(scheduler["max_batch_size"].Scalar() == "4");
  // continuous -> vllm: vllm reads max_num_seqs, so it stays; chunked_prefill is not vllm's.
  doc = built({"scheduler.kind=vllm", "kv.prefix_caching=true"});
  CHECK(doc->notes().size() == 1);
  CHECK(doc->root()["scheduler"]["max_num_seqs"].Scalar() == "8");
  CHECK_FALSE(doc->root()["scheduler"]["chunked_prefill"].IsDefined());
  // The same kind again, or no kind change: nothing dropped, an unknown key is still an error.
  CHECK(built({"scheduler.kind=continuous"})->notes().empty());
  CHECK_THAT(error_of(k_good, {"scheduler.kind=static"}),
             Catch::Contains("scheduler.max_batch_size: required key missing"));
  // A key given by --set after the switch is the user's own: an unknown one is refused.
  CHECK_THAT(error_of(k_good, {"scheduler.kind=static", "scheduler.max_batch_size=4",
                               "scheduler.max_num_seqs=8"}),
             Catch::Contains("scheduler.max_num_seqs at test.yaml (from --set "
                             "scheduler.max_num_seqs): unknown key"));
  // A key of the file that the new kind does not have either is dropped only when the switch
  // came from --set: in the file itself it stays an error.
  CHECK_THAT(error_of(replace(k_good, "kind: continuous", "kind: static\n  max_batch_size: 4")),
             Catch::Contains("scheduler.max_num_seqs at test.yaml:13:3: unknown key"));
}

TEST_CASE("config: a size in the wrong unit is refused naming the unit", "[core][config]") {
  const std::string gib = replace(k_good, "  capacity_tokens: 1000\n",
                                  "  memory: {accelerator_gib: 8e10, model: llama-3.1-8b}\n");
  CHECK_THAT(error_of(gib),
             Catch::Contains("kv.memory.accelerator_gib = \"8e10\" at test.yaml:15:29: not a "
                             "plausible size in GiB (a number > 0 and <= 1024); did you give "
                             "bytes?"));
  CHECK_THAT(error_of(replace(k_good, "ms: 9.3", "ms: 9.3e6")),
             Catch::Contains("step_time.points[1].ms = \"9.3e6\" at test.yaml:9:48: not a "
                             "plausible duration in ms (a number > 0 and <= 60000)"));
  // Below a minimum of 0 the message stays the range's own.
  CHECK_THAT(error_of(replace(k_good, "ms: 6.3", "ms: 0")), Catch::Contains("must be > 0"));
  // The largest accelerator memory is accepted.
  CHECK_THAT(error_of(replace(gib, "8e10", "1024")), !Catch::Contains("accelerator_gib"));
}

TEST_CASE("config: a tab or an invisible space in YAML is named with its line and column",
          "[core][config]") {
  CHECK_THAT(error_of(replace(k_good, "  kind: continuous", "\tkind: continuous")),
             Catch::Contains("test.yaml:11:1: not valid YAML: line 11 column 1: a tab character; "
                             "YAML indents with spaces (the parser said: "));
  // A non-breaking space (U+00A0) in an indent makes the key another name.
  CHECK_THAT(
      error_of(replace(k_good, "  block_size: 16", "\xC2\xA0 block_size: 16")),
      Catch::Contains("test.yaml:16:1: unknown key: it holds a non-breaking space (U+00A0)"));
  // A zero-width space inside a key reads like the valid key.
  CHECK_THAT(error_of(replace(k_good, "seed: 1",
                              "se\xE2\x80\x8B"
                              "ed: 1")),
             Catch::Contains("unknown key: it holds a zero-width space (U+200B)"));
  // In a --set value too.
  CHECK_THAT(error_of(k_good, {"scheduler={kind: static,\n\tmax_batch_size: 4"}),
             Catch::Contains("a tab character"));
}

}  // namespace t_core_config_test
