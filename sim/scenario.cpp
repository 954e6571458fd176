#include "sim/scenario.h"

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

RunOutput run_scenario(std::shared_ptr<Document> doc, bool check, RunLimits limits) {
  Scenario sc = build_scenario(doc);
  Simulation sim(std::move(sc.components), check, limits);
  sim.run();
  RunOutput out;
  out.summary = summarize(sim.requests(), sim.stats());
  out.requests_csv = requests_csv(sim.requests());
  out.summary_json = summary_json(out.summary, doc->root(), sc.seed).dump(2) + "\n";
  const Request* first = nullptr;
  for (const Request& r : sim.requests())
    if (r.state == RequestState::Rejected && (!first || r.spec.id < first->spec.id)) first = &r;
  if (first) out.first_rejection = fmt::format("request {}: {}", first->spec.id, first->reject_reason);
  return out;
}

}  // namespace servesim
