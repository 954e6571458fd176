// Issue 19's input half for configs: duplicate keys, extra documents, a misspelt required key
// and the conversions into simulated time. Each case failed on main before the fix.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "core/errors.h"
#include "core/time.h"
#include "tests/support.h"

namespace t_core_input_promise_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_good = R"(workload:
  synthetic:
    requests: 10
    arrival: {kind: poisson, rate_per_s: 2}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: uniform, min: 1, max: 5}
step_time: {kind: linear, base_ms: 1}
scheduler:
  kind: continuous
  max_num_seqs: 8
kv: {policy: paged, capacity_tokens: 1000}
seed: 1
)";

std::string error_of(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    auto doc = doc_of(yaml);
    for (const auto& s : sets) doc->apply_override(s);
    (void)build_scenario(doc);
    doc->check_all_read();
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

TEST_CASE("input promise: a YAML key given twice names both lines", "[core][config][hostile]") {
  REQUIRE(error_of(k_good) == "no error");
  // On main the first seed was used and summary.json recorded the second.
  CHECK(error_of(k_good + "seed: 2\n") ==
        "seed at test.yaml:13:1: the key is given twice in one map (first at line 12:1); give "
        "each key once");
  CHECK(error_of(replace(k_good, "kind: continuous", "kind: continuous\n  kind: static")) ==
        "scheduler.kind at test.yaml:10:3: the key is given twice in one map (first at line "
        "9:3); give each key once");
  CHECK(error_of(replace(k_good, "{kind: linear, base_ms: 1}",
                         "{kind: linear, base_ms: 1, base_ms: 2}")) ==
        "step_time.base_ms at test.yaml:7:39: the key is given twice in one map (first at line "
        "7:27); give each key once");
  // In a list of maps too.
  CHECK_THAT(error_of(k_good + "x: [{a: 1, a: 2}]\n"),
             Catch::StartsWith("x[0].a at test.yaml:13:12: the key is given twice"));
}

TEST_CASE("input promise: a second YAML document is refused, in a file and in --set",
          "[core][config][hostile]") {
  CHECK(error_of(k_good + "---\nseed: 3\n") ==
        "test.yaml:14:1: a second YAML document (after ---); a config is one document");
  CHECK_THAT(error_of(k_good + "---\n"), Catch::Contains("a second YAML document"));
  CHECK(error_of("---\n" + k_good + "...\n") == "no error");  // one document, marked
  CHECK_THAT(error_of(k_good, {"scheduler.max_num_seqs=4\n---\n5"}),
             Catch::StartsWith("--set scheduler.max_num_seqs=4\\x0A---\\x0A5:"));
  CHECK_THAT(error_of(k_good, {"scheduler.max_num_seqs=4\n---\n5"}),
             Catch::EndsWith("a second YAML document (after ---); a config is one document"));
  CHECK(error_of(k_good, {"scheduler={kind: static, kind: continuous, max_batch_size: 2}"}) ==
        "scheduler.kind at --set scheduler={kind: static, kind: continuous, max_batch_size: "
        "2}:1:16: the key is given twice in one map (first at line 1:2); give each key once");
}

TEST_CASE("input promise: a token that cannot start a value is refused, not parsed forever",
          "[core][config][hostile]") {
  // yaml-cpp reports an empty document at a block-level ',' without consuming it; counting
  // documents with LoadAll never returned (a fuzzer timeout).
  CHECK(error_of(", max_b\n") ==
        "test.yaml:1:1: \",\" cannot start a YAML value here (quote the text if it is meant as "
        "a string)");
  CHECK(error_of("# comment\n,\n") ==
        "test.yaml:2:1: \",\" cannot start a YAML value here (quote the text if it is meant as "
        "a string)");
  CHECK(error_of(k_good, {"scheduler.max_num_seqs=, 4"}) ==
        "--set scheduler.max_num_seqs=, 4:1:1: \",\" cannot start a YAML value here (quote the "
        "text if it is meant as a string)");
  // A ',' after a value is yaml-cpp's own error, as before.
  CHECK_THAT(error_of(k_good + ",\n"), Catch::Contains("test.yaml"));
}

TEST_CASE("input promise: a long document is counted beside its parse, with the same messages",
          "[core][config][hostile]") {
  // From 256 bytes on, the pass that counts documents runs on a side thread beside YAML::Load
  // (when two CPUs may be used) and is joined before either's result is read. A trailing comment
  // (two lines) makes each text long without moving a mark before it: every message must be the
  // short text's, and where both passes fail, Load's (the first pass) as before.
  const std::string pad = "\n# " + std::string(1000, 'x') + "\n";
  const std::vector<std::string> texts{
      k_good + "---\nseed: 3\n",   // a second document
      ", max_b\n",                 // a token that cannot start a value
      "# comment\n,\n",            // the same, on line 2
      k_good + ",\n",              // yaml-cpp's own error
      "---\n" + k_good + "...\n",  // one document, marked
      k_good,
  };
  for (const std::string& text : texts) {
    INFO(text);
    CHECK(error_of(text + pad) == error_of(text));
  }
  CHECK(error_of(k_good + "---\nseed: 3\n" + pad) ==
        "test.yaml:14:1: a second YAML document (after ---); a config is one document");
  CHECK(error_of(", max_b\n" + pad) ==
        "test.yaml:1:1: \",\" cannot start a YAML value here (quote the text if it is meant as "
        "a string)");
  CHECK(error_of(k_good + pad) == "no error");
  // Messages at the end of the input: the pad moves it two lines down (as on main).
  CHECK(error_of(k_good + "---\n") ==
        "test.yaml:14:1: a second YAML document (after ---); a config is one document");
  CHECK(error_of(k_good + "---\n" + pad) ==
        "test.yaml:16:1: a second YAML document (after ---); a config is one document");
  // Both passes fail (an unclosed list): Load's message.
  CHECK(error_of(k_good + "x: [1, 2\n" + pad) ==
        "test.yaml:16:1: not valid YAML: end of sequence flow not found");
  // The first document parses, the second does not: the count's message.
  CHECK(error_of(k_good + "---\n[1, 2\n") ==
        "test.yaml:15:1: not valid YAML: end of sequence flow not found");
  CHECK(error_of(k_good + "---\n[1, 2\n" + pad) ==
        "test.yaml:17:1: not valid YAML: end of sequence flow not found");
}

TEST_CASE("input promise: aliases are walked once, so a YAML bomb is not expanded",
          "[core][config][hostile]") {
  // Ten levels of ten aliases: 10^10 leaves if expanded.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i)
    bomb += fmt::format(
        "a{0}: &a{0} [*a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, "
        "*a{1}, *a{1}]\n",
        i, i - 1);
  CHECK_THAT(error_of(k_good + bomb), Catch::Contains("a0 at test.yaml:13:1: unknown key"));
}

TEST_CASE("input promise: a misspelt required key is pointed at, with did you mean",
          "[core][config][hostile]") {
  // On main: "scheduler.max_num_seqs: required key missing in scheduler at test.yaml:9:3".
  CHECK(error_of(replace(k_good, "max_num_seqs: 8", "max_num_seqz: 8")) ==
        "scheduler.max_num_seqz at test.yaml:10:3: unknown key (did you mean max_num_seqs?); "
        "scheduler.max_num_seqs (an integer) is required");
  CHECK(error_of(replace(k_good, "scheduler:", "schedular:")) ==
        "schedular at test.yaml:8:1: unknown key (did you mean scheduler?); scheduler (a map) "
        "is required");
  // A valid key that happens to be close is not taken for a misspelling: max is not min.
  CHECK_THAT(
      error_of(replace(k_good, "{kind: uniform, min: 1, max: 5}", "{kind: uniform, max: 5}")),
      Catch::StartsWith("workload.synthetic.output_tokens.min: required key missing"));
}

TEST_CASE("input promise: conversions into simulated time never wrap", "[core][hostile]") {
  CHECK(Time::from_ms(1.5).count_ns() == 1'500'000);
  CHECK(Time::from_seconds(9e9).count_ns() == 9'000'000'000'000'000'000);
  // On main 1e300 ms became INT64_MIN (then 1 ns in the engine): now a time past the limit.
  CHECK(Time::from_ms(1e300) == Time::max());
  CHECK(Time::from_ms(std::nan("")) == Time::max());
  CHECK(Time::from_seconds(1e10) > Time::limit());
  CHECK(Time::checked_ms(1e12) == Time::from_seconds(1e9));
  CHECK_FALSE(Time::checked_ms(1e300));
  CHECK_FALSE(Time::checked_ms(-1));
  CHECK_FALSE(Time::checked_ms(std::nan("")));
  CHECK_FALSE(Time::checked_ms(9.3e12));
  CHECK(Time::from_seconds(9e9).plus_within(Time::from_seconds(2e8)) == Time::limit());
  CHECK_FALSE(Time::from_seconds(9e9).plus_within(Time::from_seconds(2e8) + Time::ns(1)));
  CHECK_FALSE(Time::limit().plus_within(Time::limit()));
}

TEST_CASE("every InputError message is clean UTF-8 even where a call site forgot printable()",
          "[input][errors]") {
  // The CI fuzzer found a hardware path with \xC0 bytes echoed raw into "cannot open hardware
  // file ..."; InputError's constructor is the backstop for every such site.
  const InputError e(std::string("cannot open x\xC0\xC0/y \x01 \xE2\x80\xAE ok \xC3\xA9\n"));
  CHECK(std::string(e.what()) == "cannot open x\\xC0\\xC0/y \\x01 \\xE2\\x80\\xAE ok \xC3\xA9\n");
  CHECK(clean_message("plain \"text\" \\ stays") == "plain \"text\" \\ stays");
  // The path in the catalogue's message goes through printable() as well.
  std::string yaml = k_good;
  yaml.replace(yaml.find("step_time: {kind: linear, base_ms: 1}"),
               std::string("step_time: {kind: linear, base_ms: 1}").size(),
               "step_time: {kind: roofline, model: llama-2-7b, hardware: ./no\xC0where/x.yaml}");
  const std::string msg = error_of(yaml);
  INFO(msg);
  CHECK(msg.find("no\\xC0where") != std::string::npos);
  CHECK(msg.find("no\xC0where") == std::string::npos);
}

}  // namespace t_core_input_promise_test
