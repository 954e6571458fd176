#pragma once
// A run's headline figures as a benchmark tool defines them (the `benchmark` section,
// sim/benchmark_spec.h): MLPerf Server and Offline, trtllm-bench, vllm bench serve. Each tool
// starts its clock, ends it and takes percentiles its own way; docs/metrics.md sets the
// definitions side by side, and summary.json names the one behind every figure.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/benchmark_spec.h"
#include "sim/recorder.h"

namespace servesim {

/// One figure: its summary.json key, value (none when no request finished) and definition.
struct BenchmarkFigure {
  std::string key;
  std::optional<double> value;
  std::string definition;
};

struct BenchmarkSummary {
  BenchmarkKind kind = BenchmarkKind::VllmBench;
  std::vector<BenchmarkFigure> figures;
  /// mlperf_server: every sample completed and both percentiles within their limits.
  std::optional<bool> valid;
  std::string validity;  ///< why valid is what it is (mlperf_server)
};

/// What the definitions need of one request, in integer nanoseconds.
struct BenchmarkSample {
  int64_t arrival_ns = 0;
  int64_t first_token_ns = 0;
  int64_t release_ns = 0;  ///< the reply left the engine: the tools' end of the request
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
};

/// The figures of `kind` over the finished samples; `not_finished` counts requests rejected or
/// left unfinished (MLPerf's run is then invalid). Test start is simulated time 0.
[[nodiscard]] BenchmarkSummary benchmark_summary(const BenchmarkSpec& spec,
                                                 const std::vector<BenchmarkSample>& finished,
                                                 int64_t not_finished);

/// Percentile rules. numpy's default (linear between order statistics at p/100 x (n-1)), as
/// vllm bench serve uses; and sorted[floor(n x p/100)] (clamped to n-1), as MLPerf LoadGen and
/// trtllm-bench index. REQUIRES: sorted, non-empty values; p in [0, 100].
[[nodiscard]] double percentile_linear(const std::vector<double>& sorted, double p);
[[nodiscard]] double percentile_floor_index(const std::vector<double>& sorted, double p);

/// Collects the samples as requests leave (8 x 5 bytes a finished request).
class BenchmarkRecorder final : public RequestRecorder {
 public:
  explicit BenchmarkRecorder(BenchmarkSpec spec) : m_spec(spec) {}
  void record(const Request& r) override;
  [[nodiscard]] BenchmarkSummary summary() const {
    return benchmark_summary(m_spec, m_samples, m_not_finished);
  }

 private:
  BenchmarkSpec m_spec;
  std::vector<BenchmarkSample> m_samples;
  int64_t m_not_finished = 0;
};

/// summary.json's `benchmark` object and the lines added to the printed table.
[[nodiscard]] nlohmann::ordered_json benchmark_json(const BenchmarkSummary& b);
[[nodiscard]] std::string benchmark_table(const BenchmarkSummary& b);

}  // namespace servesim
