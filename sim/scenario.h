#pragma once
// A scenario: a checked config turned into the components of one simulation.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "metrics/metrics.h"
#include "sim/simulation.h"

namespace servesim {

/// The embedded default scenario (configs/default.yaml at build time).
extern const char* const k_default_scenario_yaml;

struct Scenario {
  std::shared_ptr<Document> doc;
  uint64_t seed = 1;
  Components components;
  std::optional<SloTargets> slo;  ///< the `slo` section, if any
  /// Each replica's accelerators (its step model's tensor x data parallel, else
  /// kv.memory.tensor_parallel, else 1), in replica order: per-replica goodput per accelerator.
  std::vector<int64_t> replica_accelerators;
};

/// Reads every section, builds the components and rejects any key nobody read.
/// Throws InputError on any problem; nothing has been written when it does.
[[nodiscard]] Scenario build_scenario(std::shared_ptr<Document> doc);

struct RunOptions {
  bool check = false;  ///< the engine's invariant checks at every step (servesim run --check)
  RunLimits limits;    ///< bounds on the run; a bounded run's results are partial, marked so
  /// Where requests.csv streams to. When null, RunOutput::requests_csv holds it instead
  /// (small runs, tests).
  std::ostream* requests_csv = nullptr;
  /// Skip requests.csv entirely (sweeps and benchmarks that need only the summary).
  bool no_requests_csv = false;
  /// Where steps.csv streams to (servesim run --steps); null: not written.
  std::ostream* steps_csv = nullptr;
  /// More step observers (timelines, progress); each must outlive the run.
  std::vector<StepObserver*> step_observers;
  /// More request recorders (timelines, progress); each must outlive the run.
  std::vector<RequestRecorder*> request_recorders;
};

/// Parses, builds, runs and summarizes in one call (tests and benchmarks use this).
struct RunOutput {
  Summary summary;
  std::string requests_csv;  ///< empty when streamed or skipped (RunOptions)
  std::string summary_json;
  /// "request 3: needs ..." for the rejected request with the lowest id; empty if none was.
  std::string first_rejection;
};
/// `check` turns on the engine's invariant checks at every step (servesim run --check).
/// `limits` bound the run (a bounded run's results are partial and marked so).
[[nodiscard]] RunOutput run_scenario(std::shared_ptr<Document> doc, const RunOptions& options);
/// The same for a scenario already built (so a caller can check the config before it opens
/// any output).
[[nodiscard]] RunOutput run_scenario(Scenario sc, const RunOptions& options);
[[nodiscard]] RunOutput run_scenario(std::shared_ptr<Document> doc, bool check = false,
                                     RunLimits limits = {});

}  // namespace servesim
