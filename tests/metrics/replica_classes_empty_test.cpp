// Each replica's per-class rows (metrics/replica_classes.cpp) for a cluster with classes that
// recorded no request (a bounded run stopped before the first arrival): every replica still lists
// every class, with nothing counted.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace t_metrics_replica_classes_empty_test {

using namespace servesim;

TEST_CASE("replica classes: no request recorded gives each replica empty class rows",
          "[metrics][cluster]") {
  const std::vector<std::string> names{"chat", "batch"};
  MetricsRecorder m;
  m.track_replicas({1, 1, 1}, {});
  m.set_class_names(&names);
  RunStats stats;
  stats.replicas.resize(3);
  stats.class_names = names;
  const Summary s = m.summary(stats);
  REQUIRE(s.replicas.size() == 3);
  for (const ReplicaSummary& r : s.replicas) {
    REQUIRE(r.classes.size() == 2);
    CHECK(r.classes[0].first == "chat");
    CHECK(r.classes[1].first == "batch");
    for (const auto& [name, c] : r.classes) {
      CHECK(c.routed == 0);
      CHECK(c.requests == 0);
      CHECK(c.finished == 0);
      CHECK(c.ttft_s.count == 0);
    }
  }
}

}  // namespace t_metrics_replica_classes_empty_test
