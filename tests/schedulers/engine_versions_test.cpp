// scheduler.version (core/engine_versions.h): a known release line of the engine, any patch
// release of it, or a message naming file, line, value and the known lines.
#include "core/engine_versions.h"

#include <catch2/catch.hpp>

#include "core/errors.h"
#include "tests/support.h"

namespace t_schedulers_engine_versions_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_linear = "{kind: linear, base_ms: 2, per_seq_ms: 1}";
const std::string k_kv = "{policy: paged, capacity_tokens: 64, block_size: 16}";

/// The message of building a one-request scenario with `scheduler`; "no error" when it builds.
std::string config_error(const std::string& scheduler) {
  try {
    (void)build_scenario(doc_of(trace_scenario("0,4,2\n", k_linear, scheduler, k_kv)));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string vllm(const std::string& version) {
  return "{kind: vllm, enable_prefix_caching: false, version: \"" + version + "\"}";
}

}  // namespace

TEST_CASE("engine versions: an unknown vLLM version is refused with the known lines",
          "[schedulers][versions]") {
  const std::string e = config_error(vllm("0.99.0"));
  CHECK_THAT(e, Catch::StartsWith("scheduler.version = \"0.99.0\" at ") &&
                    Catch::Contains("test.yaml:3:") &&
                    Catch::Contains("vLLM 0.99 is not a version servesim knows") &&
                    Catch::Contains("known: 0.5, 0.6, 0.7, 0.8, 0.9, 0.10, 0.11,") &&
                    Catch::Contains("0.19; a patch release such as 0.19.1 is taken as its "
                                    "MAJOR.MINOR"));
  // A typo that used to read as another version: 0.1.9 was V0 before 0.6, 1.19 was V1.
  CHECK_THAT(config_error(vllm("0.1.9")), Catch::Contains("vLLM 0.1 is not a version"));
  CHECK_THAT(config_error(vllm("1.19")), Catch::Contains("vLLM 1.19 is not a version"));
}

TEST_CASE("engine versions: a patch release or a tag after it runs as its line",
          "[schedulers][versions]") {
  for (const char* v : {"0.19", "0.19.0", "0.19.1", "0.19.12", "0.8.5.post1", "0.10.1rc2"})
    CHECK(config_error(vllm(v) + "") == "no error");
  CHECK(config_error("{kind: sglang, max_running_requests: 4, version: \"0.4.6.post4\"}") ==
        "no error");
  CHECK(config_error("{kind: trtllm, max_batch_size: 4, version: \"1.3.0rc20\"}") == "no error");
}

TEST_CASE("engine versions: malformed versions name the form and the known lines",
          "[schedulers][versions]") {
  for (const char* v : {"six", "0.19.", "0.19.x", "0.19.1-", "v0.19", ".19", "0.19 ", "0..19"})
    CHECK_THAT(config_error(vllm(v)), Catch::Contains("MAJOR.MINOR[.PATCH]") &&
                                          Catch::Contains("known vLLM versions: 0.5,"));
}

TEST_CASE("engine versions: SGLang and TensorRT-LLM have their own lines",
          "[schedulers][versions]") {
  CHECK_THAT(config_error("{kind: sglang, max_running_requests: 4, version: \"0.19.0\"}"),
             Catch::Contains("SGLang 0.19 is not a version servesim knows (known: 0.3, 0.4, "
                             "0.5;"));
  CHECK_THAT(config_error("{kind: trtllm, max_batch_size: 4, version: \"0.4.0\"}"),
             Catch::Contains("TensorRT-LLM 0.4 is not a version servesim knows (known: 0.16,"));
  CHECK(known_engine_versions("vllm").back() == "0.19");
  CHECK(default_engine_version("vllm") == "0.19.0");
  CHECK(known_engine_versions("continuous").empty());
}

}  // namespace t_schedulers_engine_versions_test
