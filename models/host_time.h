#pragma once
// The engine's host (CPU) time and CUDA graphs around a step-time model (issue 21).
//
// Kernel profiles and operator tables time the GPU's kernels only. A serving engine also
// schedules, prepares inputs, samples and processes outputs on the CPU every step, and hides
// part of that behind the GPU when it overlaps (vLLM's async_scheduling, SGLang's overlap
// scheduler, TensorRT-LLM's overlap scheduler). And it launches the step's kernels either as a
// captured CUDA graph (replayed at the next captured batch size, padding the rest) or one by one
// (eager), which costs launch time per layer that small steps cannot hide. The wrapper built
// here gives the engine one duration per step:
//
//   gpu  = the inner model at the padded shape (graphed step), or max(inner, eager launch time)
//   step = max(gpu, hidden host time) + exposed host time
//
// where each host component (schedule, prepare_inputs, sample, process_outputs) costs
// per_step_ms + per_seq_ms x sequences and is hidden only under the engine's overlap mode.
// The defaults per engine and version and their sources are in docs/schedulers.md.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/config.h"
#include "models/step_time_model.h"

namespace servesim {

/// One host component's CPU time a step: per_step_ms + per_seq_ms x sequences.
struct HostCost {
  double per_step_ms = 0;  ///< >= 0
  double per_seq_ms = 0;   ///< >= 0
  [[nodiscard]] double ms(int32_t sequences) const {
    return per_step_ms + per_seq_ms * static_cast<double>(sequences);
  }
};

enum class HostPart : uint8_t { Schedule, PrepareInputs, Sample, ProcessOutputs };
inline constexpr size_t k_host_parts = 4;

struct HostTime {
  std::array<HostCost, k_host_parts> parts{};  ///< indexed by HostPart
  /// Under overlap, the parts marked here run while the GPU computes (hidden up to its time);
  /// the others stay on the step's critical path. Without overlap every part is exposed.
  std::array<bool, k_host_parts> hidden{};
  /// Parts another process runs (vLLM V1's and SGLang's detokenizing front end): never on the
  /// step's critical path, overlap or not; like hidden parts, they bound the step from below.
  std::array<bool, k_host_parts> off_path{};
  bool overlap = false;
};

struct CudaGraphs {
  bool enabled = false;  ///< false: every step eager
  /// Captured sizes, ascending, >= 1. A decode-only step of `sequences` seats up to the
  /// largest runs the graph of the smallest captured size >= it (padding seats added to the
  /// shape) when `pad`, or only an exact size when not (TensorRT-LLM's enable_padding false).
  std::vector<int32_t> capture_sizes;
  bool pad = true;
  /// Steps that also prefill run as graphs when their tokens (prefill tokens + decode seats)
  /// are at most the largest captured size, unpadded (vLLM V1's piecewise graphs); else eager.
  bool graph_mixed_steps = false;
  /// Eager launch time of the whole step: layers x per-layer launch cost. An eager step takes
  /// at least this long, however short its kernels.
  double eager_launch_ms = 0;
};

/// `inner` with host time and CUDA graphs around it. REQUIRES: costs >= 0, capture_sizes
/// ascending and >= 1, data_parallel >= 1. Precomputes the padding table (no allocation per
/// step). With `data_parallel` ranks (a step shape holds every rank's seats; `inner` prices the
/// busiest rank), each host part is charged for the busiest rank's ceil(sequences / ranks)
/// seats, and that count picks the captured graph, every rank padded to it.
[[nodiscard]] std::unique_ptr<StepTimeModel> with_host_time(std::unique_ptr<StepTimeModel> inner,
                                                            const HostTime& host,
                                                            const CudaGraphs& graphs,
                                                            bool apply_graphs,
                                                            int32_t data_parallel = 1);

/// Reads the engine's host-time and CUDA-graph keys of a `scheduler` section (`version`,
/// `host_time`, `cuda_graphs` and the overlap flag of kinds vllm, sglang and trtllm) and wraps
/// `inner` when `host_time` is on or `cuda_graphs` is given; other kinds and sections without
/// them return `inner` unchanged. `step_time` gives the model's layer count for the eager cost
/// (its `layers`, or its catalogue `model`).
[[nodiscard]] std::unique_ptr<StepTimeModel> apply_engine_host(
    const Cfg& scheduler, const Cfg& step_time, std::unique_ptr<StepTimeModel> inner);

}  // namespace servesim
