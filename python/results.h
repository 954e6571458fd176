#pragma once
// servesim.run, servesim.sweep and servesim.capacity: the library calls `servesim run`, `servesim
// size` and `servesim capacity` make, with their results as Python objects instead of files.
// Everything is computed in memory by the same code that writes the files: summary.json's text
// is parsed into a dict and each CSV's text into numpy columns, so the two never differ.
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "metrics/token_outputs.h"

namespace servesim::python {

namespace py = pybind11;

/// What `servesim run --steps` writes, as Python objects.
struct RunResult {
  py::dict summary;                  ///< summary.json
  py::object requests = py::none();  ///< requests.csv's columns (None when request_table=False)
  py::object steps = py::none();     ///< steps.csv's columns (None when steps=False)
  py::list notes;                    ///< what the command line prints as "servesim: note: ..."
  std::string table;                 ///< the summary the command line prints
  std::string first_rejection;
  /// `servesim run --percentiles --json`'s "latency_s": count, mean, median, std, max and the
  /// percentiles of TTFT, TPOT, ITL and E2E (None without percentiles)
  py::object latency_s = py::none();
  /// export=: {format name: the file's text, as `--export NAME` writes it}
  py::dict exports;
};

/// The limits of every run a call makes, as `--max-sim-time`, `--max-wall-time` (seconds) and
/// `--max-queued`; checked against the options' ranges (InputError naming the argument).
struct LimitArgs {
  std::optional<double> max_sim_time, max_wall_time;
  std::optional<int64_t> max_queued;
};

/// What every call takes as the command line's shared options do (cli/sim_options.h).
struct SimArgs {
  LimitArgs limits;
  std::optional<int64_t> requests;  ///< --requests: the synthetic workload's request count
  TokenOutputs tokens;              ///< --percentiles, --export
};

struct RunArgs {
  bool request_table = true, steps = true, check = false;
  int threads = 0;  ///< threads=: the parallel engine (RunOptions::threads)
  SimArgs sim;
};
[[nodiscard]] RunResult run(const py::handle& config, const py::handle& overrides,
                            const py::handle& seed, const RunArgs& args);

/// What `servesim size` writes and prints.
struct SweepResult {
  py::dict summary;  ///< summary.json ("kind": "sweep")
  py::dict points;   ///< points.csv's columns
  std::string report;
  /// export=: {point: {format name: text}} for each scenario's cheapest point (as `servesim size
  /// --export` writes point-N.FILE)
  py::dict exports;
};
struct SweepArgs {
  std::optional<unsigned> jobs;  ///< default: all cores
  SimArgs sim;                   ///< of each point's runs
};
/// `seed`, as for run(), is appended to the overrides of the base scenario ("seed=N").
[[nodiscard]] SweepResult sweep(const py::handle& sweep, const py::handle& overrides,
                                const py::handle& seed, const SweepArgs& args);

/// What `servesim capacity` writes.
struct CapacityResultPy {
  py::dict summary;  ///< capacity.json ("kind": "capacity")
  py::dict probes;   ///< one array per field of capacity.json's probes, in the order run
  py::object run_summary = py::none();  ///< summary.json of the highest rate meeting the SLOs
  py::object latency_s = py::none();    ///< percentiles=: as RunResult's, at the capacity
  py::dict exports;                     ///< export=: as RunResult's, of the run at the capacity
};
struct CapacityArgs {
  double tolerance = 0.01;
  std::optional<double> min_attainment;
  SimArgs sim;  ///< of each probe's run
};
[[nodiscard]] CapacityResultPy capacity(const py::handle& config, const py::handle& overrides,
                                        const py::handle& seed, const CapacityArgs& args);

}  // namespace servesim::python
