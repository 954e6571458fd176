#pragma once
// Importers: measured latencies in several published formats, turned into step measurements
// (a step's shape and its duration) that the fitters in models/fit.h take.
#include <optional>
#include <string>
#include <vector>

#include "models/fit.h"

namespace servesim {

struct MeasurementFilter {
  std::optional<std::string> model;     ///< splitwise: the `model` column
  std::optional<std::string> hardware;  ///< splitwise: the `hardware` column
  std::optional<int> tp;                ///< splitwise: `tensor_parallel`
  std::optional<int> layers;            ///< layer profiles: the model's layer count
  /// Keep only steps whose decoding sequences hold at most this many KV tokens each on average
  /// (the operating region of the workload to be simulated).
  std::optional<int64_t> max_kv_per_seq;
};

struct MeasurementSet {
  std::vector<StepSample> samples;
  std::string description;  ///< what was read, for the report
};

/// Formats: "csv" (servesim's generic measurements), "splitwise" (perf_model.csv),
/// "llmservingsim" (a folder of per-layer profiles). "auto" detects from the path.
[[nodiscard]] std::vector<std::string> measurement_formats();
[[nodiscard]] std::string detect_measurement_format(const std::string& path);
/// Throws InputError naming the file, line and column, or the missing option.
/// Applies filter.max_kv_per_seq; throws if nothing is left.
void restrict_region(MeasurementSet& set, const MeasurementFilter& filter);
[[nodiscard]] MeasurementSet read_measurements(const std::string& path, const std::string& format,
                                               const MeasurementFilter& filter);

/// batch_size,context_tokens,prefill_tokens,step_ms (optional prefill_sequences, default 1 when
/// prefill_tokens > 0): context_tokens are the KV tokens read by the decoding sequences.
[[nodiscard]] MeasurementSet read_generic_measurements(const std::string& path);
/// Splitwise's perf_model.csv: one prefill and one decode measurement per row, for one
/// model/hardware/tensor-parallel group (the filter must pick one when the file holds several).
[[nodiscard]] MeasurementSet read_splitwise(const std::string& path, const MeasurementFilter& f);
/// LLMServingSim's vLLM layer profiles: attention.csv, dense.csv and per_sequence.csv in `dir`
/// (times per layer in microseconds), composed into whole steps for `layers` layers.
[[nodiscard]] MeasurementSet read_layer_profile(const std::string& dir, const MeasurementFilter& f);

}  // namespace servesim
