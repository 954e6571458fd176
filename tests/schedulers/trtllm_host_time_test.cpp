// host_time: true under kind: trtllm (models/host_time.cpp): every known release line before
// 1.0 runs the C++ executor, whose host time no public profile gives, and is refused with the
// line's number; every line from 1.0 on (the PyTorch backend) takes it. Walked over every
// known line, so a new one is checked too.
#include <catch2/catch.hpp>

#include "core/engine_versions.h"
#include "core/errors.h"
#include "tests/support.h"

namespace t_schedulers_trtllm_host_time_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string config_error(const std::string& scheduler) {
  try {
    (void)build_scenario(doc_of(trace_scenario("0,4,2\n", "{kind: linear, base_ms: 2}", scheduler,
                                               "{policy: paged, capacity_tokens: 64, "
                                               "block_size: 16}")));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("trtllm host time: refused before 1.0 with the version, taken from 1.0 on",
          "[schedulers][host_time]") {
  int before = 0, after = 0;
  for (const std::string& line : known_engine_versions("trtllm")) {
    INFO(line);
    const std::string e = config_error("{kind: trtllm, max_batch_size: 4, version: \"" + line +
                                       ".0\", host_time: true}");
    if (line.rfind("0.", 0) == 0) {
      ++before;
      CHECK_THAT(e, Catch::Contains("scheduler.host_time") &&
                        Catch::Contains("TensorRT-LLM " + line + " runs the C++ executor"));
      // host_time: false, or the components given as a map, are not refused for it.
      CHECK(config_error("{kind: trtllm, max_batch_size: 4, version: \"" + line +
                         ".0\", host_time: false}") == "no error");
      CHECK_THAT(config_error("{kind: trtllm, max_batch_size: 4, version: \"" + line +
                              ".0\", host_time: {schedule: {per_step_ms: 1}}}"),
                 !Catch::Contains("C++ executor"));
    } else {
      ++after;
      CHECK_THAT(e, !Catch::Contains("C++ executor"));
    }
  }
  CHECK(before > 0);
  CHECK(after > 0);
}

}  // namespace t_schedulers_trtllm_host_time_test
