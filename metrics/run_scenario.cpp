#include "metrics/run_scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <type_traits>

#include "metrics/benchmark_scenarios.h"
#include "metrics/metrics.h"
#include "metrics/output.h"
#include "metrics/steps_csv.h"
#include "sim/parallel_engine.h"
#include "traces/read_ahead.h"

namespace servesim {

RunOutput run_scenario(std::shared_ptr<Document> doc, const RunOptions& options) {
  return run_scenario(build_scenario(std::move(doc)), options);
}

namespace {

/// Runs `sim` (Simulation or ParallelSimulation) with the outputs `options` asks for.
template <class Sim>
RunOutput run_with(Sim& sim, Scenario& sc, const RunOptions& options, bool admission,
                   std::optional<double> without_failures = std::nullopt) {
  const std::shared_ptr<Document> doc = sc.doc;
  MetricsRecorder metrics(sc.slo);
  metrics.set_percentiles(options.percentiles);
  metrics.set_power(std::move(sc.replica_power), sc.replica_accelerators);
  metrics.track_replicas(std::move(sc.replica_accelerators), sim.stats().pools);
  metrics.set_class_names(&sim.class_names());
  metrics.set_tenant_names(&sim.tenant_names());
  metrics.set_track_status(admission);
  bool sharded = false;  // the parallel engine records it shard by shard, on their threads
  if constexpr (std::is_same_v<Sim, ParallelSimulation>) {
    if (metrics.shardable()) {
      sim.add_sharded_recorder(metrics);
      sharded = true;
    }
  }
  if (!sharded) {
    sim.add_step_observer(metrics);  // its step ends give the inter-token gaps
    sim.add_recorder(metrics);
  }
  std::optional<BenchmarkRecorder> bench;
  if (sc.benchmark) sim.add_recorder(bench.emplace(*sc.benchmark));
  std::ostringstream text;
  std::optional<RequestsCsvWriter> csv;
  if (!options.no_requests_csv) {
    csv.emplace(options.requests_csv ? *options.requests_csv : text);
    csv->set_class_names(&sim.class_names());
    csv->set_tenant_names(&sim.tenant_names());
    // On its thread too, the run's own distributions (the summary waits for them).
    if (options.io_thread && csv->write_on_thread() && !sharded)
      (void)csv->add_figures_for(metrics);
    sim.add_recorder(*csv);
  }
  std::optional<StepsCsvWriter> steps;
  if (options.steps_csv) {
    steps.emplace(*options.steps_csv);
    sim.add_step_observer(*steps);
  }
  for (StepObserver* o : options.step_observers) sim.add_step_observer(*o);
  for (RequestRecorder* r : options.request_recorders) sim.add_recorder(*r);
  sim.run();
  if constexpr (std::is_same_v<Sim, ParallelSimulation>) {
    if (sim.rank() != 0) {  // rank 0 holds the results
      RunOutput out;
      out.other_rank = true;
      return out;
    }
  }
  // requests.csv's last rows are written (on its thread, with io_thread) while the summary is
  // worked out.
  if (csv) csv->end_rows();
  if (steps) steps->finish();
  RunOutput out;
  out.summary = metrics.summary(sim.stats());
  if (csv) csv->finish();
  if (sim.stats().autoscale) out.autoscale_csv = autoscale_csv(*sim.stats().autoscale);
  if (FailureSummary* f = out.summary.failures ? &*out.summary.failures : nullptr;
      f && f->slo_attainment && without_failures) {
    f->slo_attainment_without_failures = without_failures;
    f->slo_attainment_cost = *without_failures - *f->slo_attainment;
  }
  if (!options.requests_csv) out.requests_csv = text.str();
  nlohmann::ordered_json j = summary_json(out.summary, doc->root(), sc.seed);
  if (bench) {  // the `benchmark` section's figures, before the resolved config
    const BenchmarkSummary b = bench->summary();
    nlohmann::ordered_json config = std::move(j["config"]);
    j.erase("config");
    j["benchmark"] = benchmark_json(b);
    j["config"] = std::move(config);
    out.benchmark_table = benchmark_table(b);
  }
  out.summary_json = j.dump(2) + "\n";
  out.first_rejection = metrics.first_rejection();
  return out;
}

/// With cluster.failures and an `slo` section: the SLO attainment of the same scenario without
/// failures (a second run of it, summary only), which the `failures` block compares with.
std::optional<double> attainment_without_failures(const Scenario& sc, const RunOptions& options) {
  if (!sc.components.failures || !sc.slo) return std::nullopt;
  Scenario base = build_scenario(sc.doc);
  base.components.failures = nullptr;
  RunOptions o;
  o.no_requests_csv = true;
  o.limits = options.limits;
  Simulation sim(std::move(base.components), false, o.limits);
  const RunOutput out = run_with(sim, base, o, base.components.admission != nullptr);
  if (!out.summary.slo) return std::nullopt;
  return out.summary.slo->attainment;
}

/// Why `sc` cannot be split over `ranks` MPI ranks (beyond parallel_unsupported): the summary's
/// recorder must be the one split shard by shard, and nothing else may record in the run's
/// order. Empty when it can.
std::string ranks_unsupported(const Scenario& sc, const RunOptions& options, int ranks) {
  if (!options.ranks_unsupported.empty()) return options.ranks_unsupported;
  if (sc.components.replicas.size() < static_cast<size_t>(ranks))
    return fmt::format("{} replicas cannot be shared out over {} ranks",
                       sc.components.replicas.size(), ranks);
  if (!options.no_requests_csv || options.steps_csv || !options.step_observers.empty() ||
      !options.request_recorders.empty())
    return "an output is written in the run's order (requests.csv, steps.csv, a timeline, "
           "--percentiles, --export, the progress line): run with --no-requests-csv and none of "
           "those";
  if (sc.benchmark) return "the `benchmark` section records requests in the run's order";
  if (!sc.components.pools.empty() || !sc.components.source->class_names().empty() ||
      !sc.components.source->tenant_names().empty())
    return "pools, request classes and tenants sum their figures across replicas (not over ranks "
           "yet)";
  return {};
}

}  // namespace

RunOutput run_scenario(Scenario sc, const RunOptions& options) {
  const bool admission = sc.components.admission != nullptr || sc.components.failures != nullptr;
  const int ranks = options.ranks ? options.ranks->size() : 1;
  if (options.threads > 0 || ranks > 1) {
    std::string why = parallel_unsupported(sc.components, options.limits);
    if (why.empty() && ranks > 1) why = ranks_unsupported(sc, options, ranks);
    if (why.empty()) {
      const std::optional<double> base = attainment_without_failures(sc, options);
      ParallelSimulation sim(std::move(sc.components), std::max(1, options.threads), options.check,
                             options.limits, ranks > 1 ? options.ranks : nullptr);
      return run_with(sim, sc, options, admission, base);
    }
    if (options.ranks && options.ranks->rank() != 0) {  // rank 0 runs it alone
      RunOutput out;
      out.other_rank = true;
      return out;
    }
    const std::optional<double> base = attainment_without_failures(sc, options);
    Simulation sim(std::move(sc.components), options.check, options.limits);
    RunOutput out = run_with(sim, sc, options, admission, base);
    out.engine_notice =
        (ranks > 1 ? "sequential engine, on rank 0 alone: " : "sequential engine: ") + why;
    return out;
  }
  const std::optional<double> base = attainment_without_failures(sc, options);
  if (options.io_thread) sc.components.source = read_ahead(std::move(sc.components.source));
  Simulation sim(std::move(sc.components), options.check, options.limits);
  return run_with(sim, sc, options, admission, base);
}

RunOutput run_scenario(std::shared_ptr<Document> doc, bool check, RunLimits limits) {
  RunOptions o;
  o.check = check;
  o.limits = limits;
  return run_scenario(std::move(doc), o);
}

}  // namespace servesim
