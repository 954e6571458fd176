#pragma once
// Results in other tools' layouts, and the latency statistics they report (docs/metrics.md#itl
// and #exports): inter-token latency (ITL), mean, median, standard deviation and any list of
// percentiles of TTFT, TPOT, ITL and E2E, with numpy's definitions as vLLM's `bench serve` uses
// them, and `vllm bench serve`'s result JSON (--save-result --save-detailed), field for field;
// GenAI-Perf's profile export JSON and Vidur's request_metrics.csv.
//
// ITL is every gap between two consecutive output tokens of a request, pooled over all finished
// requests, as metrics/token_gaps.h derives them (the same gaps as summary.json's itl_s).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "core/request.h"
#include "metrics/metrics.h"
#include "metrics/token_gaps.h"
#include "sim/recorder.h"
#include "sim/step_observer.h"

namespace servesim {

/// Mean, median, population standard deviation (numpy's std, ddof 0) and the given
/// percentiles (numpy's linear interpolation) of a set of values, as vLLM reports them. An
/// empty set gives zeros everywhere (vLLM: np.mean(values or 0)).
struct LatencyStats {
  int64_t count = 0;
  double mean = 0, median = 0, std = 0, max = 0;
  std::vector<std::pair<double, double>> percentiles;  ///< (p, value), in the order asked
};

/// REQUIRES: every p in [0, 100].
[[nodiscard]] LatencyStats latency_stats(std::vector<double> values,
                                         const std::vector<double>& percentiles);

/// "50,90,99,99.9" -> {50, 90, 99, 99.9}. Throws InputError naming `what` (the option) for an
/// empty list, a value that is not a number or one outside [0, 100].
[[nodiscard]] std::vector<double> parse_percentiles(const std::string& list,
                                                    const std::string& what);

/// vLLM's name for percentile p in a key: "99" for 99, "99.9" for 99.9 (its p_word).
[[nodiscard]] std::string percentile_word(double p);

/// One request as it left the engine, in seconds.
struct RequestTimes {
  uint64_t id = 0;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;  ///< produced: 0 for a rejected request
  bool finished = false;
  std::string error;  ///< why it was not served (rejected, or unfinished when a run stopped)
  double arrival_s = 0, ttft_s = 0, e2e_s = 0;
  double tpot_s = 0;       ///< (last token - first token) / (tokens - 1); 0 for one token
  double queue_s = 0;      ///< first admission - arrival
  double execution_s = 0;  ///< summed duration of the steps that produced its tokens
  double scheduled_to_first_token_s = 0;  ///< first token - first admission
  double scheduled_to_finish_s = 0;       ///< end of its last step - first admission
  double first_token_to_finish_s = 0;
  double preemption_s = 0;  ///< scheduled_to_finish_s - execution_s: waiting once admitted
  int32_t preemptions = 0;
  size_t itl_begin = 0;  ///< its gaps in TokenTimes::itls_s()
  size_t itl_end = 0;
};

/// Keeps each request's token times (see the top of this file). Hook it in as both a step
/// observer and a request recorder (RunOptions::step_observers and request_recorders).
class TokenTimes final : public StepObserver, public RequestRecorder {
 public:
  void on_step(const StepRecord& s) override;
  void record(const Request& r) override;

  /// Every request recorded, in id order (sorted on the first call).
  [[nodiscard]] const std::vector<RequestTimes>& requests();
  /// The gaps of every finished request, in seconds; RequestTimes::itl_begin/end index it.
  [[nodiscard]] const std::vector<double>& itls_s() const { return m_itls_s; }
  /// Finished requests whose replica ran more steps between their first and last token than
  /// they had gaps (their stall is placed after the first token: metrics/token_gaps.h).
  [[nodiscard]] int64_t stall_placed_requests() const { return m_stall_placed; }

 private:
  /// The duration of replica `rep`'s step that ended at `end_ns` (0 if none did).
  [[nodiscard]] int64_t step_duration_ns(uint32_t rep, int64_t end_ns) const;

  StepEnds m_step_ends{false};                            // every step end, per replica
  std::vector<std::vector<int64_t>> m_step_durations_ns;  // beside m_step_ends
  std::vector<RequestTimes> m_requests;
  std::vector<double> m_itls_s;
  int64_t m_stall_placed = 0;
  bool m_sorted = true;
};

/// TTFT, TPOT, ITL and E2E statistics of the finished requests, in seconds.
struct LatencyReport {
  LatencyStats ttft, tpot, itl, e2e;
};
[[nodiscard]] LatencyReport latency_report(TokenTimes& t, const std::vector<double>& percentiles);

/// The printed table of `servesim run --percentiles`: one row per metric (TTFT, TPOT, ITL in
/// ms, E2E in s), columns mean, median, std and each percentile.
[[nodiscard]] std::string latency_table(const LatencyReport& r);

/// `vllm bench serve --save-result --save-detailed`'s JSON for this run (docs/metrics.md
/// #exports): its keys, in its order, its units (seconds in the per-request lists, ms in the
/// statistics), with every metric's percentiles (ttft, tpot, itl and e2el selected).
/// `percentiles` as vLLM's --metric-percentiles (its default: {99}).
void write_vllm_bench_json(std::ostream& out, const Summary& s, TokenTimes& t,
                           const std::vector<double>& percentiles);

/// GenAI-Perf's profile_export_genai_perf.json for this run (docs/metrics.md#exports): one
/// object per metric, its names and units (ms, tokens, tokens/sec), unit, avg, p1, p5, p10, p25,
/// p50, p75, p90, p95, p99, min, max and std (numpy's), then the rates (unit and avg) and
/// input_config. `percentiles` (--percentiles) adds further pP keys after p99.
void write_genai_perf_json(std::ostream& out, const Summary& s, TokenTimes& t,
                           const std::vector<double>& percentiles);

/// A layout of `servesim run --export NAME`, written to `file` in the --out folder.
struct ExportFormat {
  const char* name;
  const char* file;
  const char* what;
};
/// Every --export format, sorted by name.
[[nodiscard]] const std::vector<ExportFormat>& export_formats();
/// The format called `name`. Throws InputError naming `option` and the valid names.
[[nodiscard]] const ExportFormat& export_format(const std::string& name, const std::string& option);
/// Writes format `f` of the run. `percentiles` as --percentiles (empty: the tool's default).
void write_export(const ExportFormat& f, std::ostream& out, const Summary& s, TokenTimes& t,
                  const std::vector<double>& percentiles);

/// Vidur's request_metrics.csv (its MetricsStore): "Request Id", its request time
/// distributions and histograms in its column order, in seconds, one row per request in id
/// order; a request that did not finish has its time columns empty (docs/metrics.md#exports).
void write_vidur_request_metrics(std::ostream& out, TokenTimes& t);

}  // namespace servesim
