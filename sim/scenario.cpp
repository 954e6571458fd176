#include "sim/scenario.h"

#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "models/step_time_model.h"
#include "schedulers/scheduler.h"
#include "sim/metrics.h"
#include "sim/output.h"
#include "traces/workload_source.h"

namespace servesim {

namespace {

// step_time is a section, or the path of a YAML file holding one (what `servesim calibrate
// --out` writes); the file's keys are checked like the scenario's.
std::unique_ptr<StepTimeModel> read_step_time(const Cfg& root) {
  if (!root.is_scalar("step_time")) return make_step_time_model(root.child("step_time"));
  const auto doc = Document::load_file(root.existing_file("step_time", "step-time model file"));
  auto model = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return model;
}

}  // namespace

Scenario build_scenario(std::shared_ptr<Document> doc) {
  Scenario s;
  s.doc = doc;
  const Cfg root = Cfg::root(doc);
  s.seed = static_cast<uint64_t>(root.get_int("seed", 1, {0, std::numeric_limits<int64_t>::max()}));
  s.components.kv = make_kv_manager(root.child("kv"));
  s.components.step_time = read_step_time(root);
  s.components.scheduler = make_scheduler(root.child("scheduler"));
  s.components.source = make_workload(root.child("workload"), s.seed);
  doc->check_all_read();
  return s;
}

RunOutput run_scenario(std::shared_ptr<Document> doc, const RunOptions& options) {
  return run_scenario(build_scenario(std::move(doc)), options);
}

RunOutput run_scenario(Scenario sc, const RunOptions& options) {
  const std::shared_ptr<Document> doc = sc.doc;
  Simulation sim(std::move(sc.components), options.check, options.limits);
  MetricsRecorder metrics;
  sim.add_recorder(metrics);
  std::ostringstream text;
  std::optional<RequestsCsvWriter> csv;
  if (!options.no_requests_csv) {
    csv.emplace(options.requests_csv ? *options.requests_csv : text);
    sim.add_recorder(*csv);
  }
  sim.run();
  if (csv) csv->finish();
  RunOutput out;
  out.summary = metrics.summary(sim.stats());
  if (!options.requests_csv) out.requests_csv = text.str();
  out.summary_json = summary_json(out.summary, doc->root(), sc.seed).dump(2) + "\n";
  out.first_rejection = metrics.first_rejection();
  return out;
}

RunOutput run_scenario(std::shared_ptr<Document> doc, bool check, RunLimits limits) {
  RunOptions o;
  o.check = check;
  o.limits = limits;
  return run_scenario(std::move(doc), o);
}

}  // namespace servesim
