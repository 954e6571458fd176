#pragma once
// `servesim explain`: what serving a model on an accelerator costs in memory, bandwidth and
// arithmetic, worked out from the catalogues (docs/hardware.md). The figures are bounds: peak
// bandwidth and peak FLOP/s, no efficiency factors (the roofline step model applies those).
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_options.h"
#include "models/catalog.h"

namespace servesim {

struct ExplainOptions {
  Dtype weight = Dtype::Bf16;
  Dtype kv = Dtype::Bf16;
  Dtype compute = Dtype::Bf16;    ///< the dtype whose peak FLOP/s bounds the arithmetic
  int64_t context_tokens = 2048;  ///< tokens of one conversation (prompt and reply)
  int64_t tensor_parallel = 1;
  double utilization = 0.9;  ///< share of memory a server may use (vLLM's default)
};

/// Whole-model figures unless named per accelerator; bytes are decimal (GB = 10^9 bytes).
struct ExplainFigures {
  double weight_bytes = 0;       ///< all parameters
  double step_weight_bytes = 0;  ///< read by one decode step, per accelerator
  double kv_bytes_per_token = 0;
  double kv_bytes_per_conversation = 0;    ///< x context_tokens
  double memory_bytes = 0;                 ///< tp x one accelerator's memory
  int64_t conversations_whole_memory = 0;  ///< floor((memory - weights) / KV per conversation)
  int64_t conversations_utilized = 0;      ///< the same with memory x utilization
  double decode_ms_batch1 = 0;             ///< step_weight_bytes / bandwidth
  double peak_flops_per_s = 0;             ///< one accelerator, compute dtype
  double ridge_flops_per_byte = 0;         ///< peak FLOP/s / bandwidth
  int64_t compute_bound_batch_weights_only = 0;  ///< smallest batch at the ridge, KV ignored
  /// The same with each sequence reading context_tokens of KV; nullopt when never.
  std::optional<int64_t> compute_bound_batch;
  double intensity_limit = 0;  ///< FLOP/byte of a decode step as batch grows
};

/// FLOP per byte of one decode step of `batch` sequences, each reading `context_tokens` of KV:
/// (2 x active parameters + 4 x layers x heads x head_dim x context) x batch
///   / (active weight bytes + batch x (context + 1) x KV bytes per token).
[[nodiscard]] double decode_intensity(const ModelSpec& m, const ExplainOptions& o, int64_t batch);

/// REQUIRES: hw has a peak in o.compute. Throws InputError when the weights do not fit.
[[nodiscard]] ExplainFigures explain_figures(const ModelSpec& m, const HardwareSpec& hw,
                                             const ExplainOptions& o);

/// GB/s achieved by a step that moved `megabytes` (10^6 bytes) in `ms` milliseconds.
[[nodiscard]] double achieved_gb_per_s(double megabytes, double ms);

[[nodiscard]] CommandLine explain_command_line();

/// The command: parses `args`, prints to `out`. Throws InputError on bad arguments.
int cmd_explain(const std::vector<std::string>& args, std::ostream& out);

}  // namespace servesim
