// The Python module `servesim` (docs/python.md): run a scenario, a sizing sweep or a capacity
// search from Python and get the results as dicts and numpy arrays.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/errors.h"
#include "core/file_sink.h"
#include "core/interrupt.h"
#include "metrics/memory_budget.h"
#include "metrics/output.h"
#include "python/config_input.h"
#include "python/csv_arrays.h"
#include "python/results.h"
#include "sim/scenario.h"

namespace py = pybind11;
using namespace servesim::python;

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

/// Imports numpy, which every result holds, so that a Python without it fails at `import
/// servesim` with a message that says what to install, not pybind11's "initialization failed".
/// pybind11 turns a std::exception thrown here into ImportError with its text.
void import_numpy() {
  try {
    py::module_::import("numpy");
  } catch (py::error_already_set& e) {
    const std::string python = py::str(py::module_::import("sys").attr("executable"));
    if (e.matches(PyExc_ModuleNotFoundError) &&
        py::str(e.value().attr("name")).equal(py::str("numpy")))
      throw std::runtime_error(fmt::format(
          "servesim needs numpy: pip install numpy, or apt-get install python3-numpy (this "
          "python is {})",
          python));
    // The error's own type and text, without pybind11's traceback ("At: ...").
    const std::string why =
        fmt::format("{}: {}", py::str(e.type().attr("__name__")).cast<std::string>(),
                    py::str(e.value()).cast<std::string>());
    throw std::runtime_error(
        fmt::format("servesim needs numpy, which {} cannot import: {}", python, why));
  }
}

constexpr const char* k_run_doc = R"(Runs a scenario, as `servesim run --steps` does, in memory.

config: a path (str or os.PathLike) to a scenario YAML, a dict with the same content (written
    out as YAML and read exactly as a file is: see to_yaml()), or None for the embedded default
    scenario (configs/default.yaml). Relative paths in a dict resolve against the working
    directory, in a file against the file's folder.
overrides: what `--set` takes: a list of "key.path=value" strings (value read as YAML), or a
    dict {"key.path": value}.
seed: an int, as `--seed` (applied after the overrides).
requests: an int, as `--requests N`: the synthetic workload's request count (applied after the
    overrides and the seed; a scenario without workload.synthetic is refused). A bool here is
    the old spelling of request_table (DeprecationWarning).
request_table, steps: keep requests.csv's / steps.csv's columns (False saves memory on long
    runs).
check: verify the engine's invariants at every step (`--check`).
threads: as `--threads N`: a cluster's replicas on N threads, with the same results (0: the
    sequential engine); a run that cannot be split says why in a note and runs sequentially.
max_sim_time, max_wall_time (seconds), max_queued: bound the run as the options of the same
    names do; a bounded run's results are partial (summary["partial"]).
percentiles: as `--percentiles`: a list of numbers in [0, 100] (or "50,90,99.9"); the Result's
    latency_s then holds mean, median, std, max and these percentiles of TTFT, TPOT, ITL and
    E2E, and its table ends with the table the option prints.
export: as `--export`: a format name or a list of them ("vllm-bench", "genai-perf", "vidur");
    the Result's exports then maps each name to the text the option writes.

Returns a Result. Bad input raises ValueError with servesim's message.)";

constexpr const char* k_sweep_doc = R"(Runs a sizing sweep, as `servesim size` does.

sweep: a path to a sweep file (docs/sizing.md) or a dict with the same content (its `base`
    then resolves against the working directory).
overrides: applied to the base scenario of every point, as `servesim size --set`.
seed: an int, applied to the base scenario after the overrides (as "seed=N").
requests: an int, as `servesim size --requests N` (every point's synthetic request count).
jobs: threads (default: all cores); the results do not depend on it.
max_sim_time, max_wall_time, max_queued: the limits of every run, as for run().
percentiles: as `servesim size --percentiles`: each point gains columns p{P}_ttft_ms,
    p{P}_tpot_ms, p{P}_itl_ms and p{P}_e2e_ms (numpy's percentiles, as run()'s).
export: as `servesim size --export`: the exports of each scenario's cheapest point.

Returns a SweepResult: .summary (summary.json), .points (points.csv's columns as numpy
arrays), .points_df(), .report (what `servesim size` prints), .exports ({point: {name: text}}).)";

constexpr const char* k_capacity_doc = R"(Finds the highest request rate meeting the SLOs,
as `servesim capacity` does.

config, overrides, seed, requests: as for run(); the scenario needs an `slo` section.
tolerance: the width of the final bracket, relative (1e-6 to 1).
min_attainment: also require this share of requests within the SLOs (0 to 1).
max_sim_time, max_wall_time, max_queued: the limits of every probe's run, as for run().
percentiles, export: as for run(), of the run at the capacity (.latency_s, .exports).

Returns a CapacityResult: .summary (capacity.json), .probes (one numpy array per probe field,
in the order run), .probes_df(), .run_summary (summary.json at the capacity, or None when no
rate met the SLOs), .found, .latency_s, .exports.)";

}  // namespace

PYBIND11_MODULE(servesim, m) {
  m.doc() =
      "servesim: a discrete-event simulator of LLM serving (docs/python.md).\n\n"
      "run(), sweep() and capacity() do what `servesim run`, `servesim size` and `servesim "
      "capacity` do, with the results as dicts and numpy arrays instead of files.";
  m.attr("__version__") = SERVESIM_VERSION;
  import_numpy();  // every result holds numpy arrays: fail at import, not later
  // A write past `ulimit -f` fails with EFBIG (OSError) rather than killing the interpreter by
  // SIGXFSZ. CPython ignores the signal at startup already; an embedding program may not.
  servesim::ignore_file_size_signal();

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const servesim::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const servesim::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const servesim::OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const std::bad_alloc&) {
      // Plain words and the options that bound a run, not pybind11's bare "std::bad_alloc".
      const std::string message = servesim::out_of_memory_message(
          servesim::memory_limits(), servesim::python_memory_use(true, true));
      PyErr_SetString(PyExc_MemoryError, message.c_str());
    }
  });

  py::class_<RunResult>(m, "Result", "The results of run(): summary.json, requests.csv, steps.csv.")
      .def_readonly("summary", &RunResult::summary,
                    "summary.json as a dict: every metric (times in seconds), the seed and the "
                    "resolved config (docs/metrics.md)")
      .def_readonly("requests", &RunResult::requests,
                    "requests.csv as a dict of numpy arrays, one per column in the file's order "
                    "(None when run with request_table=False)")
      .def_readonly("steps", &RunResult::steps,
                    "steps.csv as a dict of numpy arrays, one per column (None when run with "
                    "steps=False)")
      .def_readonly("notes", &RunResult::notes,
                    "what the command line prints as 'servesim: note: ...' (also issued as "
                    "warnings)")
      .def_readonly("table", &RunResult::table, "the summary `servesim run` prints")
      .def_readonly("first_rejection", &RunResult::first_rejection,
                    "why the rejected request with the lowest id was rejected; '' if none was")
      .def_readonly("latency_s", &RunResult::latency_s,
                    "with percentiles: `servesim run --percentiles --json`'s latency_s, a dict "
                    "{ttft, tpot, itl, e2e} of {count, mean, median, std, max, percentiles: "
                    "{p50: ...}} in seconds; None without")
      .def_readonly("exports", &RunResult::exports,
                    "with export: {format name: the text `--export NAME` writes}; {} without")
      .def(
          "requests_df",
          [](const RunResult& r) {
            if (r.requests.is_none())
              throw py::value_error("this run kept no requests (run with request_table=True)");
            return data_frame(r.requests, "requests");
          },
          "requests.csv as a pandas DataFrame (ImportError without pandas)")
      .def(
          "steps_df",
          [](const RunResult& r) {
            if (r.steps.is_none())
              throw py::value_error("this run kept no steps (run with steps=True)");
            return data_frame(r.steps, "steps");
          },
          "steps.csv as a pandas DataFrame (ImportError without pandas)")
      .def("__repr__", [](const RunResult& r) {
        return "<servesim.Result: " + first_line(r.table).substr(11) + ">";
      });

  py::class_<SweepResult>(m, "SweepResult", "The results of sweep(): summary.json, points.csv.")
      .def_readonly("summary", &SweepResult::summary, "the sweep's summary.json as a dict")
      .def_readonly("points", &SweepResult::points,
                    "points.csv as a dict of numpy arrays, one per column (docs/sizing.md)")
      .def_readonly("report", &SweepResult::report, "what `servesim size` prints")
      .def_readonly("exports", &SweepResult::exports,
                    "with export: {point: {format name: text}} for each scenario's cheapest "
                    "point; {} without")
      .def(
          "points_df", [](const SweepResult& r) { return data_frame(r.points, "points"); },
          "points.csv as a pandas DataFrame (ImportError without pandas)")
      .def("__repr__", [](const SweepResult& r) {
        return fmt::format("<servesim.SweepResult: {} points>", py::len(r.summary["points"]));
      });

  py::class_<CapacityResultPy>(m, "CapacityResult", "The results of capacity(): capacity.json.")
      .def_readonly("summary", &CapacityResultPy::summary, "capacity.json as a dict")
      .def_readonly("probes", &CapacityResultPy::probes,
                    "the probes as a dict of numpy arrays, one per field, in the order run")
      .def_readonly("run_summary", &CapacityResultPy::run_summary,
                    "summary.json of the highest rate meeting the SLOs (None if none met them)")
      .def_readonly("latency_s", &CapacityResultPy::latency_s,
                    "with percentiles: run()'s latency_s for the run at the capacity; None "
                    "without, or when no rate met the SLOs")
      .def_readonly("exports", &CapacityResultPy::exports,
                    "with export: {format name: text} of the run at the capacity; {} without")
      .def_property_readonly(
          "found", [](const CapacityResultPy& r) { return r.summary["found"].cast<bool>(); },
          "whether the search bracketed the capacity (a rate meeting the SLOs, one failing)")
      .def(
          "probes_df", [](const CapacityResultPy& r) { return data_frame(r.probes, "probes"); },
          "the probes as a pandas DataFrame (ImportError without pandas)")
      .def("__repr__", [](const CapacityResultPy& r) {
        const py::object c = r.summary["capacity"];
        return c.is_none() ? std::string("<servesim.CapacityResult: no rate meets the SLOs>")
                           : fmt::format("<servesim.CapacityResult: {:.4f} requests/s offered>",
                                         c["offered_rate_per_s"].cast<double>());
      });

  m.def(
      "run",
      [](const py::object& config, const py::object& overrides, const py::object& seed,
         const py::object& requests, std::optional<bool> request_table, bool steps, bool check,
         int threads, std::optional<double> max_sim_time, std::optional<double> max_wall_time,
         std::optional<int64_t> max_queued, const py::object& percentiles,
         const py::object& exports) {
        RunArgs a;
        if (threads < 0 || threads > 4096)
          throw servesim::InputError(
              fmt::format("threads = {}: must be from 0 (sequential) to 4096", threads));
        a.threads = threads;
        if (py::isinstance<py::bool_>(requests)) {
          // The old meaning (before requests=N meant --requests N): keep the table or not.
          py::module_::import("warnings")
              .attr("warn")(
                  "run(requests=True/False) is deprecated: requests=N is now the "
                  "synthetic request count, as --requests N; use request_table=",
                  py::module_::import("builtins").attr("DeprecationWarning"),
                  py::arg("stacklevel") = 2);
          if (request_table)
            throw servesim::InputError(
                "requests: a bool here is the old spelling of request_table, which is given "
                "too; give request_table alone");
          a.request_table = requests.cast<bool>();
        } else {
          a.sim.requests = request_count(requests);
          a.request_table = request_table.value_or(true);
        }
        a.steps = steps;
        a.check = check;
        a.sim.limits = {max_sim_time, max_wall_time, max_queued};
        a.sim.tokens = {percentile_list(percentiles), export_list_of(exports)};
        return run(config, overrides, seed, a);
      },
      k_run_doc, py::arg("config") = py::none(), py::arg("overrides") = py::none(),
      py::arg("seed") = py::none(), py::kw_only(), py::arg("requests") = py::none(),
      py::arg("request_table") = py::none(), py::arg("steps") = true, py::arg("check") = false,
      py::arg("threads") = 0, py::arg("max_sim_time") = py::none(),
      py::arg("max_wall_time") = py::none(), py::arg("max_queued") = py::none(),
      py::arg("percentiles") = py::none(), py::arg("export") = py::none());

  m.def(
      "sweep",
      [](const py::object& sweep_file, const py::object& overrides, const py::object& seed,
         const py::object& requests, std::optional<int> jobs, std::optional<double> max_sim_time,
         std::optional<double> max_wall_time, std::optional<int64_t> max_queued,
         const py::object& percentiles, const py::object& exports) {
        if (jobs && (*jobs < 1 || *jobs > 4096))
          throw servesim::InputError(
              fmt::format("jobs: {} is out of range (allowed: from 1 to 4096)", *jobs));
        SweepArgs a;
        if (jobs) a.jobs = static_cast<unsigned>(*jobs);
        a.sim = {{max_sim_time, max_wall_time, max_queued},
                 request_count(requests),
                 {percentile_list(percentiles), export_list_of(exports)}};
        return sweep(sweep_file, overrides, seed, a);
      },
      k_sweep_doc, py::arg("sweep"), py::arg("overrides") = py::none(),
      py::arg("seed") = py::none(), py::kw_only(), py::arg("requests") = py::none(),
      py::arg("jobs") = py::none(), py::arg("max_sim_time") = py::none(),
      py::arg("max_wall_time") = py::none(), py::arg("max_queued") = py::none(),
      py::arg("percentiles") = py::none(), py::arg("export") = py::none());

  m.def(
      "capacity",
      [](const py::object& config, const py::object& overrides, const py::object& seed,
         const py::object& requests, double tolerance, std::optional<double> min_attainment,
         std::optional<double> max_sim_time, std::optional<double> max_wall_time,
         std::optional<int64_t> max_queued, const py::object& percentiles,
         const py::object& exports) {
        CapacityArgs a;
        a.tolerance = tolerance;
        a.min_attainment = min_attainment;
        a.sim = {{max_sim_time, max_wall_time, max_queued},
                 request_count(requests),
                 {percentile_list(percentiles), export_list_of(exports)}};
        return capacity(config, overrides, seed, a);
      },
      k_capacity_doc, py::arg("config"), py::arg("overrides") = py::none(),
      py::arg("seed") = py::none(), py::kw_only(), py::arg("requests") = py::none(),
      py::arg("tolerance") = 0.01, py::arg("min_attainment") = py::none(),
      py::arg("max_sim_time") = py::none(), py::arg("max_wall_time") = py::none(),
      py::arg("max_queued") = py::none(), py::arg("percentiles") = py::none(),
      py::arg("export") = py::none());

  m.def(
      "to_yaml", [](const py::object& config) { return yaml_from_python(config); },
      "The YAML text run() reads for a dict config: the line:column in a message about a dict "
      "points into this text.",
      py::arg("config"));

  m.def(
      "load_config",
      [](const py::object& path) {
        const ConfigText c = config_text(path, "config", true);
        const std::shared_ptr<servesim::Document> doc = load_document(c);
        return py::module_::import("json").attr("loads")(
            servesim::yaml_to_json(doc->root()).dump());
      },
      "A scenario file (None: the default scenario) as a dict, to change and pass to run(). "
      "Relative paths in it then resolve against the working directory, not the file's folder.",
      py::arg("path") = py::none());
}
