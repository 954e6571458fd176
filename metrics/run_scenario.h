#pragma once
// Running a scenario (sim/scenario.h) to its outputs: the summary, requests.csv and steps.csv.
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "metrics/metrics.h"
#include "sim/parallel_mpi.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "sim/step_observer.h"

namespace servesim {

struct RunOptions {
  bool check = false;  ///< the engine's invariant checks at every step (servesim run --check)
  RunLimits limits;    ///< bounds on the run; a bounded run's results are partial, marked so
  /// Where requests.csv streams to. When null, RunOutput::requests_csv holds it instead
  /// (small runs, tests).
  std::ostream* requests_csv = nullptr;
  /// Skip requests.csv entirely (sweeps and benchmarks that need only the summary).
  bool no_requests_csv = false;
  /// A second thread for the sequential engine's input and output: the workload read ahead
  /// (traces/read_ahead.h) and requests.csv formatted and written there
  /// (RequestsCsvWriter::write_on_thread). servesim run sets it where the process may use two
  /// CPUs or more. The same results either way.
  bool io_thread = false;
  /// Where steps.csv streams to (servesim run --steps); null: not written.
  std::ostream* steps_csv = nullptr;
  /// More step observers (timelines, progress); each must outlive the run.
  std::vector<StepObserver*> step_observers;
  /// More request recorders (timelines, progress); each must outlive the run.
  std::vector<RequestRecorder*> request_recorders;
  /// Further percentiles of summary.json's ITL distributions (servesim run --percentiles).
  std::vector<double> percentiles;
  /// 0: the sequential engine. N >= 1: the parallel engine on N threads (servesim run
  /// --threads), when the run allows it (parallel_unsupported, sim/parallel_engine.h), with the
  /// same results; else the sequential engine, and RunOutput::engine_notice says why.
  int threads = 0;
  /// An MPI launch of several ranks (servesim run under mpirun, sim/parallel_mpi.h): every rank
  /// calls run_scenario with the same config and options; the parallel engine shares the
  /// replicas out by rank, then by thread (max(1, threads) each), and only rank 0's RunOutput
  /// holds the results. When the run cannot be split (parallel_unsupported, or what
  /// ranks_unsupported says), rank 0 runs it alone and the others return at once. Null: one
  /// process.
  const MpiWorld* ranks = nullptr;
  /// Why the caller's outputs keep the run on one rank (requests.csv, steps.csv, ...: written in
  /// the run's order); empty if nothing does. The same on every rank.
  std::string ranks_unsupported;
};

/// Parses, builds, runs and summarizes in one call (tests and benchmarks use this).
struct RunOutput {
  Summary summary;
  std::string requests_csv;  ///< empty when streamed or skipped (RunOptions)
  std::string summary_json;
  /// The `benchmark` section's figures as printed lines; empty without one.
  std::string benchmark_table;
  /// "request 3: needs ..." for the rejected request with the lowest id; empty if none was.
  std::string first_rejection;
  /// autoscale.csv (metrics/autoscale_summary.h); empty without cluster.autoscale.
  std::string autoscale_csv;
  /// With RunOptions::threads: one line when the run went to the sequential engine instead.
  std::string engine_notice;
  /// Over MPI ranks: true on a rank other than 0, whose output is empty (rank 0 writes it).
  bool other_rank = false;
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
