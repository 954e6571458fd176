#include "python/results.h"

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "core/side_thread.h"
#include "metrics/exports.h"
#include "metrics/memory_budget.h"
#include "metrics/output.h"
#include "metrics/request_count.h"
#include "metrics/run_scenario.h"
#include "python/config_input.h"
#include "python/csv_arrays.h"
#include "sizing/capacity.h"
#include "sizing/capacity_json.h"
#include "sizing/sweep.h"
#include "sizing/sweep_output.h"
#include "sizing/sweep_pool.h"
#include "sizing/sweep_run.h"

namespace servesim::python {
namespace {

/// Runs `body(flag)` on a thread of its own without the GIL, so other Python threads go on,
/// while this thread checks Python's signals every 100 ms: Ctrl-C (a notebook's interrupt)
/// sets `flag`, which the engine polls, and comes back as KeyboardInterrupt. `body` must not
/// touch Python objects.
template <class T, class F>
T interruptible(F&& body) {
  volatile std::sig_atomic_t flag = 0;
  std::optional<T> result;
  std::exception_ptr error;
  bool python_error = false;
  {
    const py::gil_scoped_release release;
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread worker([&] {
      try {
        result.emplace(body(&flag));
      } catch (...) {
        error = std::current_exception();
      }
      const std::lock_guard<std::mutex> lock(m);
      done = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> lock(m);
    while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) {
      if (python_error) continue;
      lock.unlock();
      {
        const py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {  // the handler raised (KeyboardInterrupt)
          python_error = true;
          flag = SIGINT;
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (python_error) throw py::error_already_set();
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

py::object json_loads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

/// Each export of `t` as its file's text, by format name.
std::vector<std::pair<std::string, std::string>> export_texts(const TokenOutputs& t,
                                                              const Summary& s,
                                                              TokenTimes& tokens) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ExportFormat* f : t.exports) {
    std::ostringstream text;
    write_export(*f, text, s, tokens, t.percentiles);
    out.emplace_back(f->name, text.str());
  }
  return out;
}

py::dict export_dict(const std::vector<std::pair<std::string, std::string>>& texts) {
  py::dict d;
  for (const auto& [name, text] : texts) d[py::str(name)] = py::str(text);
  return d;
}

double checked_real(const char* name, double v, double min, double max, bool min_exclusive,
                    const char* unit) {
  if (!(min_exclusive ? v > min : v >= min) || !(v <= max))
    throw InputError(fmt::format("{}: {} is out of range (allowed: {} {:g} to {:g}{}{})", name,
                                 fmt::format("{}", v), min_exclusive ? "above" : "from", min, max,
                                 *unit ? " " : "", unit));
  return v;
}

/// The limits as the command line's options give them (cli/cli.cpp: run_limits), with the
/// options' ranges; the interrupt flag is set on the worker thread.
RunLimits run_limits(const LimitArgs& a) {
  RunLimits limits;
  if (a.max_sim_time)
    limits.max_sim_time =
        Time::from_seconds(checked_real("max_sim_time", *a.max_sim_time, 0, 9e9, true, "s"));
  if (a.max_wall_time)
    limits.max_wall_s = checked_real("max_wall_time", *a.max_wall_time, 0, 1e9, true, "s");
  if (a.max_queued) {
    if (*a.max_queued < 1 || *a.max_queued > 1'000'000'000)
      throw InputError(fmt::format("max_queued: {} is out of range (allowed: from 1 to 1000000000)",
                                   *a.max_queued));
    limits.max_queued = *a.max_queued;
  }
  return limits;
}

}  // namespace

RunResult run(const py::handle& config, const py::handle& overrides, const py::handle& seed,
              const RunArgs& args) {
  const std::vector<std::string> sets = override_list(overrides, seed);
  const ConfigText c = config_text(config, "config", true);
  RunOptions options;  // the streams are set on the worker thread
  options.check = args.check;
  options.threads = args.threads;
  options.no_requests_csv = !args.request_table;
  // As `servesim run`: a second CPU reads the trace and writes the request table (same results).
  options.io_thread = args.threads == 0 && usable_cpus() >= 2;
  options.limits = run_limits(args.sim.limits);
  const TokenOutputs& t = args.sim.tokens;
  options.percentiles = t.percentiles;  // summary.json's ITL too, as on the command line
  struct Out {
    RunOutput run;
    std::string steps_csv;
    std::vector<std::string> notes;
    std::string memory_warning;               ///< check_memory's, when the run might not fit
    std::string latency_json, latency_table;  ///< percentiles given
    std::vector<std::pair<std::string, std::string>> exports;
  };
  Out out = interruptible<Out>([&](const volatile std::sig_atomic_t* flag) {
    std::shared_ptr<Document> doc = load_document(c);
    for (const auto& a : sets) doc->apply_override(a);
    if (args.sim.requests) apply_request_count(*doc, *args.sim.requests, "requests");
    Scenario scenario = build_scenario(doc);
    Out o;
    o.notes = doc->notes();
    const MemoryUse use = python_memory_use(args.request_table, args.steps);
    o.memory_warning = check_memory(estimate_memory(scenario, options, use), memory_limits(), use);
    RunOptions opts = options;
    opts.limits.interrupt = flag;
    std::ostringstream steps;
    if (args.steps) opts.steps_csv = &steps;
    std::optional<TokenTimes> tokens;  // per-token times, as `--percentiles` keeps them
    if (t.wanted()) {
      opts.step_observers.push_back(&tokens.emplace());
      opts.request_recorders.push_back(&*tokens);
    }
    o.run = run_scenario(std::move(scenario), opts);
    o.steps_csv = steps.str();
    if (tokens && !t.percentiles.empty()) {
      const LatencyReport lr = latency_report(*tokens, t.percentiles);
      o.latency_json = latency_json(lr).dump();
      o.latency_table = latency_table(lr);
    }
    if (tokens) o.exports = export_texts(t, o.run.summary, *tokens);
    return o;
  });
  RunResult r;
  r.summary = json_loads(out.run.summary_json);
  if (args.request_table)
    r.requests =
        csv_arrays(out.run.requests_csv, "requests.csv", {"status", "reason", "class", "tenant"});
  if (args.steps) r.steps = csv_arrays(out.steps_csv, "steps.csv", {"bound"});
  const py::object warn = py::module_::import("warnings").attr("warn");
  if (!out.run.engine_notice.empty()) out.notes.push_back(out.run.engine_notice);
  for (const std::string& n : out.notes) {
    r.notes.append(n);
    warn(py::str("servesim: note: " + n), py::arg("stacklevel") = 2);
  }
  if (!out.memory_warning.empty())
    warn(py::str("servesim: warning: " + out.memory_warning), py::arg("stacklevel") = 2);
  r.table = summary_table(out.run.summary) + out.run.benchmark_table;
  if (!out.latency_json.empty()) {
    r.latency_s = json_loads(out.latency_json);
    r.table += "\n" + out.latency_table;  // as `servesim run --percentiles` prints it
  }
  r.first_rejection = out.run.first_rejection;
  r.exports = export_dict(out.exports);
  return r;
}

SweepResult sweep(const py::handle& sweep_file, const py::handle& overrides, const py::handle& seed,
                  const SweepArgs& args) {
  std::vector<std::string> sets = override_list(overrides, seed);
  if (args.sim.requests)  // as `servesim size --requests`
    sets.push_back(fmt::format("workload.synthetic.requests={}", *args.sim.requests));
  const ConfigText c = config_text(sweep_file, "sweep", false);
  const RunLimits point_limits = run_limits(args.sim.limits);
  const TokenOutputs& t = args.sim.tokens;
  const unsigned threads =
      args.jobs ? *args.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (threads < 1 || threads > 4096)
    throw InputError(fmt::format("jobs: {} is out of range (allowed: from 1 to 4096)", threads));
  struct Out {
    std::string points_csv, summary_json, report;
    std::vector<std::pair<size_t, std::vector<std::pair<std::string, std::string>>>> exports;
  };
  const Out out = interruptible<Out>([&](const volatile std::sig_atomic_t* flag) {
    SweepSpec spec = c.is_path ? load_sweep(c.file, sets) : parse_sweep(c.text, c.file, sets);
    spec.percentiles = t.percentiles;
    std::vector<size_t> all(spec.point_count());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    RunLimits limits = point_limits;
    limits.interrupt = flag;
    std::vector<PointResult> rows = evaluate_points(spec, all, threads, {}, limits);
    mark_pareto(rows, spec);
    Out o{points_csv(spec, rows), sweep_summary_json(spec, rows), sweep_report(spec, rows), {}};
    // As `servesim size --export`: each scenario's cheapest point, run again.
    for (const PointResult& row : rows) {
      if (!row.cheapest || t.exports.empty()) continue;
      TokenTimes tokens;
      const Probe p = rerun_row(spec, row, tokens, limits);
      if (!p.built || !p.error.empty())
        throw InputError(
            fmt::format("point {} ({}): {}", row.point, spec.label(row.point), p.error));
      o.exports.emplace_back(row.point, export_texts(t, p.summary, tokens));
    }
    return o;
  });
  SweepResult r;
  for (const auto& [point, texts] : out.exports) r.exports[py::int_(point)] = export_dict(texts);
  r.summary = json_loads(out.summary_json);
  r.points = csv_arrays(out.points_csv, "points.csv", {"reason", "label", "step_source"});
  r.report = out.report;
  return r;
}

CapacityResultPy capacity(const py::handle& config, const py::handle& overrides,
                          const py::handle& seed, const CapacityArgs& args) {
  std::vector<std::string> sets = override_list(overrides, seed);
  if (args.sim.requests)  // as `servesim capacity --requests`
    sets.push_back(fmt::format("workload.synthetic.requests={}", *args.sim.requests));
  const ConfigText c = config_text(config, "config", true);
  CapacityOptions o;
  o.limits = run_limits(args.sim.limits);
  const TokenOutputs& t = args.sim.tokens;
  o.percentiles = t.percentiles;
  o.keep_tokens = t.wanted();
  o.tolerance = checked_real("tolerance", args.tolerance, 1e-6, 1, false, "relative");
  if (args.min_attainment)
    o.min_attainment = checked_real("min_attainment", *args.min_attainment, 0, 1, false, "");
  struct Out {
    nlohmann::ordered_json capacity;
    std::string run_summary;
    std::string latency_json;
    std::vector<std::pair<std::string, std::string>> exports;
  };
  const Out out = interruptible<Out>([&](const volatile std::sig_atomic_t* flag) {
    const std::string text = c.is_path ? read_text_file(c.file, "config") : c.text;
    CapacityOptions opts = o;
    opts.limits.interrupt = flag;
    const CapacityResult r = find_capacity(text, c.file, sets, opts);
    Out got{capacity_json(c.file, r, opts),
            r.meeting ? r.probes[*r.meeting].run.summary_json : std::string(),
            {},
            {}};
    if (r.meeting && r.tokens) {
      if (!t.percentiles.empty())
        got.latency_json = latency_json(latency_report(*r.tokens, t.percentiles)).dump();
      got.exports = export_texts(t, r.probes[*r.meeting].run.summary, *r.tokens);
    }
    return got;
  });
  CapacityResultPy r;
  r.summary = json_loads(out.capacity.dump());
  const py::module_ np = py::module_::import("numpy");
  const py::list probes = r.summary["probes"];
  for (const auto& field : out.capacity["probes"].front().items()) {
    const py::str key(field.key());
    py::list values;
    for (const auto& p : probes) values.append(p[key]);
    r.probes[key] = np.attr("array")(values);
  }
  if (!out.run_summary.empty()) r.run_summary = json_loads(out.run_summary);
  if (!out.latency_json.empty()) r.latency_s = json_loads(out.latency_json);
  r.exports = export_dict(out.exports);
  return r;
}

}  // namespace servesim::python
