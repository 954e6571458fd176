#pragma once
// Run metrics, with the definitions of vLLM's benchmark_serving (see docs/metrics.md):
//   TTFT  = end of the step that produced the first output token - arrival
//   TPOT  = (last token time - first token time) / (output tokens - 1), requests with > 1 token
//   E2E   = release - arrival
//   queue = first admission - arrival
//   output tokens/s = output tokens of finished requests / (last release - first arrival)
// Percentiles interpolate linearly between order statistics (numpy's default).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/quantiles.h"
#include "sim/recorder.h"
#include "sim/request.h"
#include "sim/simulation.h"

namespace servesim {

struct Distribution {
  int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  /// False once more values came than QuantileSketch keeps: percentiles are then within
  /// QuantileSketch::k_relative_error of exact (mean and max stay exact).
  bool exact = true;
};

struct Summary {
  int64_t requests = 0;
  int64_t finished = 0;
  int64_t rejected = 0;
  int64_t unfinished = 0;  ///< arrived but not served when a bounded run stopped
  std::string stopped_by;  ///< empty for a complete run
  int64_t prompt_tokens = 0;  ///< of finished requests
  int64_t output_tokens = 0;  ///< of finished requests
  double first_arrival_s = 0;
  double last_release_s = 0;
  double duration_s = 0;      ///< last release - first arrival
  double output_tokens_per_s = 0;
  double requests_per_s = 0;  ///< finished requests / duration
  Distribution ttft_s, tpot_s, e2e_s, queue_s;
  int64_t preemptions = 0;
  int64_t preempted_requests = 0;
  int64_t steps = 0;
  double mean_batch_sequences = 0;  ///< sequences per step, averaged over steps
  double busy_share = 0;            ///< time a step was running / duration
  int64_t prefill_tokens_computed = 0;
  int64_t kv_capacity_tokens = 0;
  int64_t kv_peak_used_tokens = 0;
  int64_t peak_in_flight = 0;  ///< most requests queued or running at once
  std::optional<KvManager::PrefixStats> prefix;  ///< with kv.prefix_caching
  std::vector<std::pair<std::string, int64_t>> workload_counters;  ///< rows skipped, capped...
  // Only when the step-time model reports what a step moves and computes (roofline):
  std::optional<double> mbu;  ///< bytes moved / (busy time x peak bandwidth)
  std::optional<double> mfu;  ///< flops / (busy time x peak FLOP/s)
  std::optional<double> bandwidth_bound_step_share;  ///< bandwidth-bound steps / steps
};

/// REQUIRES: sorted values. p in [0, 100].
[[nodiscard]] double percentile(const std::vector<double>& sorted, double p);
[[nodiscard]] Distribution distribution(std::vector<double> values);

/// Builds the summary as requests leave the engine, in memory that does not grow with the run
/// (past QuantileSketch's exact limit).
class MetricsRecorder final : public RequestRecorder {
 public:
  explicit MetricsRecorder(size_t exact_limit = QuantileSketch::k_default_exact_limit);
  void record(const Request& r) override;
  /// The summary of everything recorded, with the engine's counters.
  [[nodiscard]] Summary summary(const RunStats& stats);
  /// "request 3: needs ..." for the rejected request with the lowest id; empty if none was.
  [[nodiscard]] std::string first_rejection() const;

 private:
  Summary m_s;
  QuantileSketch m_ttft, m_tpot, m_e2e, m_queue;
  Time m_first_arrival = Time::max();
  Time m_last_release;
  uint64_t m_first_rejected_id = UINT64_MAX;
  std::string m_first_rejected_reason;
};

/// The summary of a finished set of requests (tests).
[[nodiscard]] Summary summarize(const std::vector<Request>& requests, const RunStats& stats);

}  // namespace servesim
