// RunOptions::io_thread (servesim run's second thread: the trace read ahead, requests.csv
// formatted and written there) changes nothing in a run's results: summary.json and
// requests.csv are byte for byte those of the run without it, for a whole run and for one
// stopped early, where the thread has read further than the engine took (the counters of
// skipped rows and capped prompts, and the class names, are those up to where the engine
// stopped).
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_io_thread_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// 3,000 rows over 300 s: a zero-token row every 97th (skipped and counted), long prompts every
/// 13th (capped by the transform), a class "late" first named at row 2,000.
std::string trace_text() {
  std::string s = "arrival_s,prompt_tokens,output_tokens,class\n";
  for (int i = 0; i < 3000; ++i) {
    const int prompt = i % 97 == 50 ? 0 : (i % 13 == 0 ? 900 : 20 + i % 50);
    const char* cls = i >= 2000 && i % 7 == 0 ? "late" : (i % 2 ? "chat" : "batch");
    s += std::to_string(i / 10) + "." + std::to_string(i % 10) + "," + std::to_string(prompt) +
         "," + std::to_string(1 + i % 9) + "," + cls + "\n";
  }
  return s;
}

RunOutput run(const std::string& trace, bool io_thread, Time max_sim_time,
              const std::string& more = "") {
  RunOptions o;
  o.io_thread = io_thread;
  o.limits.max_sim_time = max_sim_time;
  return run_scenario(doc_of("workload: {trace: {path: " + trace +
                             ", zero_tokens: skip}, transform: {max_context_tokens: 512}}\n"
                             "step_time: {kind: linear, base_ms: 5, per_prefill_token_ms: 0.01}\n"
                             "scheduler: {kind: continuous, max_num_seqs: 8}\n"
                             "kv: {policy: paged, block_size: 16, capacity_tokens: 8192}\n" +
                             more),
                      o);
}

}  // namespace

TEST_CASE("io thread: the same summary.json and requests.csv, whole run and stopped early",
          "[metrics]") {
  const std::string trace = write_temp("io-thread.csv", trace_text());
  for (const Time stop : {Time::max(), Time::ns(12'000'000'000)}) {
    INFO(stop.count_ns());
    const RunOutput plain = run(trace, false, stop);
    const RunOutput threaded = run(trace, true, stop);
    CHECK(threaded.summary_json == plain.summary_json);
    CHECK(threaded.requests_csv == plain.requests_csv);
    // The cases do what they claim: rows were skipped and prompts capped; the early stop took
    // about 120 of the 3,000 rows, before "late" was named.
    CHECK(plain.summary_json.find("trace_rows_skipped_zero_tokens") != std::string::npos);
    CHECK(plain.summary_json.find("transform_capped_context_tokens") != std::string::npos);
    const bool whole = stop == Time::max();
    CHECK((plain.summary_json.find("\"late\"") != std::string::npos) == whole);
    CHECK((plain.summary.requests > 2900) == whole);
  }
}

// With the thread, the run's own TTFT, TPOT, E2E, queue and server-TTFT distributions are added
// to and worked out there (MetricsRecorder::add_figures_on): the same figures to the bit, with
// the `api` section's server TTFT, SLO checks, a cluster (whose run-wide sums the summary redoes
// in replica order) and a run stopped early.
TEST_CASE("io thread: the run's distributions added on the writer's thread give the same summary",
          "[metrics]") {
  const std::string trace = write_temp("io-thread-figures.csv", trace_text());
  const std::string slo = "slo: {ttft_ms: 40, tpot_ms: 6, e2e_ms: 200}\n";
  const std::string api = "api: {request_overhead_ms: 1, response_overhead_ms: 0.5}\n";
  const std::string cluster = "cluster: {replicas: 3, router: {kind: round_robin}}\n";
  for (const std::string& more : {slo + api, slo + cluster, api + cluster}) {
    for (const Time stop : {Time::max(), Time::ns(12'000'000'000)}) {
      INFO(more << stop.count_ns());
      const RunOutput plain = run(trace, false, stop, more);
      const RunOutput threaded = run(trace, true, stop, more);
      CHECK(threaded.summary_json == plain.summary_json);
      CHECK(threaded.requests_csv == plain.requests_csv);
      CHECK(plain.summary.finished > 100);
      CHECK(plain.summary.ttft_s.count == plain.summary.finished);
      CHECK(plain.summary.server_ttft_s.has_value() == (more.find("api") != std::string::npos));
      CHECK(plain.summary.replicas.size() == (more.find("cluster") != std::string::npos ? 3 : 0));
    }
  }
}

}  // namespace t_metrics_io_thread_test
