// The sentences of the printed summary (metrics/summary_output.cpp) on a Summary filled by hand,
// each compared whole: the partial-run line, preemptions by swapping, the statuses (failed only
// when some failed), the cluster's busy and routed ranges, each pool role's line and its TTFT
// and TPOT means (each only with requests), one accelerator or several, the workload's
// counters (only those above 0) and the prefix cache's share (0 when nothing was queried).
#include <catch2/catch.hpp>
#include <string>

#include "metrics/energy.h"
#include "metrics/output.h"

namespace t_metrics_summary_lines_test {

using namespace servesim;

namespace {

bool has_line(const std::string& table, const std::string& line) {
  return table.find("\n" + line + "\n") != std::string::npos || table.rfind(line + "\n", 0) == 0;
}

PoolSummary pool(const std::string& name, const std::string& role, int64_t ttft_count,
                 int64_t tpot_count) {
  PoolSummary p;
  p.name = name;
  p.role = role;
  p.replicas = 2;
  p.accelerators = 4;
  p.busy_share = 0.5;
  p.routed = 7;
  p.handed_off = 6;
  p.received = 5;
  p.finished = 3;
  p.ttft_s.count = ttft_count;
  p.ttft_mean_s = 0.0123;
  p.tpot_s.count = tpot_count;
  p.tpot_mean_s = 0.00456;
  return p;
}

}  // namespace

TEST_CASE("summary lines: each sentence on figures filled by hand", "[metrics]") {
  Summary s;
  s.requests = 20;
  s.stopped_by = "max_time_s";
  s.unfinished = 3;
  s.finished = 5;
  s.rejected = 2;
  s.preempted_requests = 1;
  s.preemptions = 4;
  s.swap_preemptions = 1;
  s.by_status.emplace();
  s.by_status->rejected = 5;
  s.by_status->shed = 1;
  s.by_status->timed_out = 2;
  s.replicas.resize(3);
  s.replicas[0].busy_share = 0.5;
  s.replicas[1].busy_share = 0.25;
  s.replicas[2].busy_share = 0.75;
  s.replicas[0].routed = 4;
  s.replicas[1].routed = 2;
  s.replicas[2].routed = 9;
  s.pools = {pool("pre", "prefill", 7, 0), pool("dec", "decode", 0, 5), pool("mix", "mixed", 3, 3),
             pool("none", "mixed", 0, 0)};
  s.energy.emplace();
  s.energy->joules = 2200;
  s.energy->accelerators = 1;
  s.energy->mean_power_w = 220;
  s.energy->joules_per_output_token = 2;
  s.energy->output_tokens_per_joule = 0.5;
  s.workload_counters = {{"rows dropped", 0}, {"prompts clipped", 3}};
  s.prefix.emplace();
  s.prefix->evicted_blocks = 2;
  std::string t = summary_table(s);
  INFO(t);
  CHECK(
      has_line(t, "PARTIAL    stopped early (max_time_s): 3 requests arrived and were not served"));
  CHECK(
      has_line(t, "requests   5 finished, 2 rejected, 1 preempted (4 preemptions, 1 by swapping)"));
  CHECK(has_line(t, "ended      3 refused by admission, 1 shed, 2 timed out, 0 cancelled"));
  CHECK(has_line(t, "cluster    3 replicas, busy 25.0% to 75.0%, routed 2 to 9 requests each"));
  CHECK(has_line(t,
                 "pool       pre (prefill, 2 replicas, 4 accelerators): busy 50.0%, routed 7, "
                 "handed off 6, finished 3; TTFT mean 12.3 ms"));
  CHECK(has_line(t,
                 "pool       dec (decode, 2 replicas, 4 accelerators): busy 50.0%, received 5, "
                 "finished 3; TPOT mean 4.56 ms"));
  CHECK(has_line(t,
                 "pool       mix (mixed, 2 replicas, 4 accelerators): busy 50.0%, routed 7, "
                 "finished 3; TTFT mean 12.3 ms, TPOT mean 4.56 ms"));
  CHECK(has_line(t,
                 "pool       none (mixed, 2 replicas, 4 accelerators): busy 50.0%, routed 7, "
                 "finished 3"));
  CHECK(has_line(t,
                 "energy     2.2 kJ on 1 accelerator, mean 220 W; 2 J per output token, 0.5 "
                 "output tokens/J"));
  CHECK(has_line(t, "workload   prompts clipped: 3"));
  CHECK(t.find("rows dropped") == std::string::npos);
  CHECK(has_line(t,
                 "prefix     0.0% of prefill tokens found cached (0 of 0), 2 cached blocks "
                 "evicted"));
  // No swapping, one failed, two accelerators, a complete run, some prefix hits.
  s.stopped_by.clear();
  s.swap_preemptions = 0;
  s.by_status->failed = 1;
  s.energy->accelerators = 2;
  s.prefix->queried_tokens = 8;
  s.prefix->hit_tokens = 2;
  t = summary_table(s);
  CHECK(t.find("PARTIAL") == std::string::npos);
  CHECK(has_line(t, "requests   5 finished, 2 rejected, 1 preempted (4 preemptions)"));
  CHECK(
      has_line(t, "ended      3 refused by admission, 1 shed, 2 timed out, 0 cancelled, 1 failed"));
  CHECK(has_line(t,
                 "energy     2.2 kJ on 2 accelerators, mean 220 W; 2 J per output token, 0.5 "
                 "output tokens/J"));
  CHECK(has_line(t,
                 "prefix     25.0% of prefill tokens found cached (2 of 8), 2 cached blocks "
                 "evicted"));
}

}  // namespace t_metrics_summary_lines_test
