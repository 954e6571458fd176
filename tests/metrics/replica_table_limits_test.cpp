// The printed replica table's limits (metrics/summary_output.cpp), on summaries made by hand:
// at most 32 replica rows, class rows only while every replica's fit in 64 rows, class names cut
// to 14 characters, and replicas named within their pool.
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "metrics/metrics.h"
#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_replica_table_limits_test {

using namespace servesim;

namespace {

// Lines of `text` that start with `head`.
int lines_starting(const std::string& text, const std::string& head) {
  int n = 0;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    if (text.compare(at, head.size(), head) == 0) ++n;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return n;
}

Summary fleet(size_t replicas, size_t classes) {
  Summary s;
  s.replicas.resize(replicas);
  for (size_t i = 0; i < replicas; ++i) {
    s.replicas[i].routed = static_cast<int64_t>(i);
    for (size_t c = 0; c < classes; ++c)
      s.replicas[i].classes.emplace_back("class" + std::to_string(c), ReplicaClassSummary{});
  }
  return s;
}

}  // namespace

TEST_CASE("replica table limits: 32 replica rows are printed, the rest counted",
          "[metrics][cluster]") {
  const std::string at = summary_table(fleet(32, 0));
  CHECK(lines_starting(at, "31 ") == 1);
  CHECK(at.find("more replicas") == std::string::npos);
  const std::string past = summary_table(fleet(33, 0));
  CHECK(lines_starting(past, "31 ") == 1);
  CHECK(lines_starting(past, "32 ") == 0);
  CHECK_THAT(past, Catch::Contains("\n... 1 more replicas (summary.json lists every one)\n"));
  CHECK_THAT(past, Catch::Contains("cluster    33 replicas, busy 0.0% to 0.0%, routed 0 to 32 "
                                   "requests each\n"));
}

TEST_CASE("replica table limits: class rows while every replica's fit in 64 rows",
          "[metrics][cluster][classes]") {
  // 32 replicas x (1 + 1 class) = 64 rows: shown; 21 x 3 = 63: shown; 22 x 3 = 66: left out.
  CHECK(lines_starting(summary_table(fleet(32, 1)), "  class0 ") == 32);
  CHECK(lines_starting(summary_table(fleet(21, 2)), "  class1 ") == 21);
  CHECK(lines_starting(summary_table(fleet(22, 2)), "  class") == 0);
  CHECK(lines_starting(summary_table(fleet(33, 1)), "  class") == 0);
  CHECK(lines_starting(summary_table(fleet(13, 4)), "  class") == 0);     // 13 x 5 = 65: one past
  CHECK(lines_starting(summary_table(fleet(16, 3)), "  class2 ") == 16);  // 16 x 4 = 64
  // A class name is cut to its first 14 characters.
  Summary s = fleet(2, 0);
  s.replicas[0].classes.emplace_back("abcdefghijklmnopq", ReplicaClassSummary{});
  s.replicas[0].classes.emplace_back("x", ReplicaClassSummary{});
  const std::string t = summary_table(s);
  CHECK(lines_starting(t, "  abcdefghijklmn ") == 1);
  CHECK(lines_starting(t, "  x ") == 1);
  CHECK(t.find("abcdefghijklmno") == std::string::npos);
}

TEST_CASE("replica table limits: replicas are numbered within their pool, pools listed after",
          "[metrics][cluster]") {
  Summary s = fleet(5, 0);
  for (size_t i = 0; i < 5; ++i) s.replicas[i].pool = i < 2 ? "a" : "b";
  s.pools.resize(2);
  s.pools[0].name = "a";
  s.pools[1].name = "b";
  const std::string t = summary_table(s);
  for (const char* row : {"a[0] ", "a[1] ", "b[0] ", "b[1] ", "b[2] ", "pool a ", "pool b "})
    CHECK(lines_starting(t, row) == 1);
  CHECK(lines_starting(t, "a[2]") == 0);
  CHECK(lines_starting(t, "b[3]") == 0);
}

}  // namespace t_metrics_replica_table_limits_test
