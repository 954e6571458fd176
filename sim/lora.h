#pragma once
// Multi-LoRA serving (the `lora` section, docs/lora.md): many low-rank adapters over one base
// model. Each request names an adapter (a trace's `adapter` column, or drawn from the
// section's popularity by request id and seed) or none (the base model). Per replica, the
// adapters held in GPU slots (max_loras, least recently used out) and in host memory
// (max_cpu_loras, 0: all of them) are tracked; a step whose adapters are not all in a slot
// first copies each missing one from host memory, after loading it from disk when host memory
// lacks it too (vLLM does this synchronously before the step runs), and its adapter tokens cost
// the LoRA shrink and expand GEMMs on the step's roofs. Schedulers keep each step to max_loras
// distinct adapters through SchedulerView::adapter_fits (core/adapter_gate.h).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/batch_state.h"
#include "core/config.h"
#include "models/step_time_model.h"
#include "traces/workload_source.h"

namespace servesim {

/// The checked `lora` section.
struct LoraSpec {
  int64_t adapters = 1;         ///< adapter ids are 1..adapters; 0 is the base model
  std::string popularity;       ///< "uniform" or "zipf"
  double zipf_alpha = 0;        ///< P(adapter k) proportional to k^-alpha
  double fraction = 1;          ///< share of requests that use an adapter
  int64_t rank = 16;            ///< with target_modules: the adapters' rank
  std::string target_modules;   ///< "attention", "all", or "" when adapter_bytes is given
  double adapter_bytes = 0;     ///< one adapter's weights, all layers, 2 bytes each
  int64_t tensor_parallel = 1;  ///< GPUs a replica's adapter weights and GEMMs are split over
  int32_t max_loras = 1;        ///< GPU adapter slots = distinct adapters per step
  int64_t max_cpu_loras = 0;    ///< host-memory adapter cache; 0: every adapter is there
  double host_to_gpu_bytes_per_s = 0;
  double disk_bytes_per_s = 0;
  std::optional<double> peak_flops_per_s;  ///< overrides the step cost's (required without one)
  std::optional<double> peak_bytes_per_s;
  std::vector<double> cdf;  ///< cdf[k - 1]: P(adapter <= k) among adapter requests

  /// The adapter of request `id` under `seed`: 0 with probability 1 - fraction, else one
  /// drawn from the popularity. A pure function of (seed, id).
  [[nodiscard]] uint32_t draw(uint64_t seed, uint64_t id) const;
  /// One adapter's copy from host memory to a GPU slot, and its load from disk, in ms.
  [[nodiscard]] double copy_ms() const;
  [[nodiscard]] double disk_ms() const;
};

/// The `lora` section of `root`, or null when absent or `enabled: false`. `step_time`: the
/// top-level step_time section (its catalogue `model` sizes the adapters), null with pools.
/// Throws InputError naming the key for bad input.
[[nodiscard]] std::shared_ptr<const LoraSpec> read_lora(const Cfg& root, const Cfg* step_time);

/// `inner` with each request's adapter drawn (LoraSpec::draw) unless the trace gave one.
[[nodiscard]] std::unique_ptr<WorkloadSource> with_lora_adapters(
    std::unique_ptr<WorkloadSource> inner, std::shared_ptr<const LoraSpec> spec, uint64_t seed);

/// What multi-LoRA did over a run (RunStats::lora).
struct LoraStats {
  int64_t adapters = 0;
  int32_t max_loras = 0;
  int64_t max_cpu_loras = 0;
  int64_t requests_with_adapter = 0;  ///< admitted to a replica with an adapter
  int64_t gpu_hits = 0;           ///< a step's adapter already in a GPU slot (per step and adapter)
  int64_t gpu_misses = 0;         ///< copied from host memory into a slot
  int64_t host_hits = 0;          ///< of the GPU misses, found in host memory
  int64_t host_misses = 0;        ///< of the GPU misses, loaded from disk first
  double load_s = 0;              ///< copy and disk time added to steps
  double compute_s = 0;           ///< LoRA GEMM time added to steps
  int64_t skipped_for_slots = 0;  ///< requests passed over for a step at max_loras (per step)
};

/// The engine's side: one per simulation, holding every replica's adapter caches.
class LoraEngine {
 public:
  LoraEngine(std::shared_ptr<const LoraSpec> spec, size_t replicas);
  /// Where replica `rep` holds `adapter`: 2 in a GPU slot, 1 in host memory only, 0 neither
  /// (or the base model).
  [[nodiscard]] uint8_t residency(uint32_t rep, uint32_t adapter) const;
  void note_request(const RequestSpec& r) { m_stats.requests_with_adapter += r.adapter != 0; }
  /// The time, in ms, replica `rep`'s planned step adds: loading its adapters missing from GPU
  /// slots (then resident), and the LoRA GEMMs of its adapter tokens on `cost`'s roofs (the
  /// section's peaks when given). Allocation-free once warm.
  [[nodiscard]] double step_ms(uint32_t rep, const std::vector<StepEntry>& plan,
                               const RequestSlots& reqs, const StepCost* cost);
  void add_skips(int64_t n) { m_stats.skipped_for_slots += n; }
  [[nodiscard]] const LoraStats& stats() const { return m_stats; }
  [[nodiscard]] const LoraSpec& spec() const { return *m_spec; }

 private:
  /// Least-recently-used set of adapter ids with a fixed capacity (0: holds every id).
  struct Lru {
    int64_t capacity = 0;
    std::vector<uint64_t> last_use;  // by adapter id; 0: not resident
    std::vector<uint32_t> resident;  // ids held (up to capacity)
    [[nodiscard]] bool holds(uint32_t a) const { return capacity == 0 || last_use[a] != 0; }
    /// Marks `a` used at `tick`; true if it was resident, else it enters (evicting the oldest).
    bool touch(uint32_t a, uint64_t tick);
  };
  struct Caches {
    Lru gpu, host;
  };

  std::shared_ptr<const LoraSpec> m_spec;
  std::vector<Caches> m_reps;
  std::vector<uint32_t> m_step_adapters;  // scratch: the step's distinct adapters
  uint64_t m_tick = 0;
  LoraStats m_stats;
};

}  // namespace servesim
