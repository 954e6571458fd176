// The parallel engine orders what its shards record by the sequential engine's event order
// (sim/parallel_engine_detail.h, Key): at one instant and phase, by replica. Three replicas that
// end every step at the same nanosecond, each releasing a request then, must hand a recorder of
// the merged stream (a timeline, the progress line) their requests in replica order 0, 1, 2 at
// each instant, as the sequential engine does, however the replicas are shared out over shards.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support.h"

namespace t_sim_parallel_ties_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("parallel ties: requests released at one instant by several replicas, replica order",
          "[sim][cluster][parallel]") {
  // Bursts of three equal requests every 50 ms, round robin: request 3k + i runs alone on
  // replica i, prefill at 50k ms and one decode, 10 ms a step: all three leave at 50k + 20 ms.
  std::string rows;
  for (int k = 0; k < 6; ++k)
    for (int i = 0; i < 3; ++i) rows += std::to_string(k * 0.05) + ",8,2\n";
  const std::string yaml =
      trace_scenario(rows, "{kind: linear, base_ms: 10}", "{kind: continuous, max_num_seqs: 4}",
                     "{policy: paged, block_size: 16, capacity_tokens: 256}") +
      "cluster: {replicas: 3, router: {kind: round_robin, load_refresh_ms: 10}}\n";
  // The ids in the order a recorder receives them.
  const auto order = [&](int threads) {
    CollectingRecorder rec;
    RunOptions o;
    o.check = true;
    o.threads = threads;
    o.no_requests_csv = true;
    o.request_recorders.push_back(&rec);
    const RunOutput out = run_scenario(doc_of(yaml), o);
    CHECK(out.engine_notice.empty());
    std::vector<uint64_t> ids;
    for (const Request& r : rec.requests) ids.push_back(r.spec.id);
    return ids;
  };
  // Worked by hand: each burst's requests leave together in replica order, their id order.
  std::vector<uint64_t> want(18);
  for (uint64_t i = 0; i < want.size(); ++i) want[i] = i;
  CHECK(order(0) == want);
  for (const int threads : {1, 2, 3}) {
    INFO("threads: " << threads);
    CHECK(order(threads) == want);
  }
}

}  // namespace t_sim_parallel_ties_test
