// A bounded run's unfinished requests are counted in their own class (metrics/metrics.cpp,
// tally_class_exit), and the classes' counts still add up to the run's. Worked by hand.
#include <catch2/catch.hpp>
#include <string>

#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_class_unfinished_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("class unfinished: a bounded run's unserved requests count in their classes",
          "[metrics][classes]") {
  // One seat, 10 ms a step; the run stops at 50 ms.
  //   0 chat (t=0, 4 + 2 tokens): prefill [0, 10), decode [10, 20): finished.
  //   1 batch (t=1 ms, 4 + 10 tokens): runs from 20 ms, still decoding at 50 ms: unfinished.
  //   2 chat (t=2 ms): waits behind it: unfinished.
  //   3 batch (t=3 ms): waits too: unfinished.
  const std::string path = write_temp("classes.csv",
                                      "arrival_s,prompt_tokens,output_tokens,class\n"
                                      "0,4,2,chat\n0.001,4,10,batch\n0.002,4,2,chat\n"
                                      "0.003,4,2,batch\n");
  RunOptions o;
  o.check = true;
  o.limits.max_sim_time = Time::ns(50'000'000);
  const RunOutput out = run_scenario(doc_of("workload: {trace: {path: " + path +
                                            "}}\n"
                                            "step_time: {kind: linear, base_ms: 10}\n"
                                            "scheduler: {kind: continuous, max_num_seqs: 1}\n"
                                            "kv: {policy: paged, block_size: 16, "
                                            "capacity_tokens: 256}\n"),
                                     o);
  const Summary& s = out.summary;
  CHECK(s.requests == 4);
  CHECK(s.finished == 1);
  CHECK(s.unfinished == 3);
  REQUIRE(s.classes.size() == 2);
  for (const auto& [name, c] : s.classes) {
    INFO(name);
    CHECK(c.requests == 2);
    CHECK(c.finished == (name == "chat" ? 1 : 0));
    CHECK(c.unfinished == (name == "chat" ? 1 : 2));
    CHECK(c.rejected == 0);
  }
}

}  // namespace t_metrics_class_unfinished_test
