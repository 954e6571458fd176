#pragma once
// Importers: measured latencies in several published formats, turned into step measurements
// (a step's shape and its duration) that the fitters in models/fit.h take.
#include <optional>
#include <string>
#include <vector>

#include "models/fit.h"

namespace servesim {

struct MeasurementFilter {
  std::optional<std::string>
      model;  ///< splitwise: the `model` column; vidur: cpu_overheads.csv's `model_name`
  std::optional<std::string> hardware;  ///< splitwise: the `hardware` column
  std::optional<int> tp;      ///< splitwise: `tensor_parallel`; vidur: the tables' TP degree
  std::optional<int> layers;  ///< layer profiles, vidur: the model's layer count
  /// vidur: a catalogue model (name or YAML path) whose hidden size, attention and KV heads and
  /// MLP width pick the tables' rows; its layer count stands in for `layers`.
  std::optional<std::string> model_shape;
  /// Keep only steps whose decoding sequences hold at most this many KV tokens each on average
  /// (the operating region of the workload to be simulated).
  std::optional<int64_t> max_kv_per_seq;
};

struct MeasurementSet {
  std::vector<StepSample> samples;
  std::string description;  ///< what was read, for the report
  /// vidur: the engine's per-step CPU time fitted to cpu_overheads.csv, when the folder has one
  /// for the chosen model and TP (not part of the samples, which are GPU time only).
  std::optional<OverheadFit> cpu_overhead;
  std::string cpu_overhead_source;  ///< which rows it was fitted to, for the report
};

/// Formats: "csv" (servesim's generic measurements), "splitwise" (perf_model.csv),
/// "llmservingsim" (a folder of per-layer profiles), "vidur" (a folder of Vidur's operator
/// tables). "auto" detects from the path.
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
/// Vidur's profiling tables (models/vidur_tables.cpp): mlp.csv and attention.csv in `dir`, plus
/// all_reduce.csv when the tensor-parallel degree is > 1, times in milliseconds per operator
/// and layer, composed into whole steps for one model shape and TP degree. cpu_overheads.csv,
/// when present, is fitted into set.cpu_overhead. Throws InputError naming what is missing when
/// the folder does not hold a complete step, or the file, line and column of a bad cell.
[[nodiscard]] MeasurementSet read_vidur_tables(const std::string& dir, const MeasurementFilter& f);

}  // namespace servesim
