#include "sim/scenario.h"

#include <fmt/format.h>

#include <limits>
#include <optional>

#include "core/units.h"
#include "models/catalog.h"
#include "models/host_time.h"
#include "models/kv_memory.h"
#include "models/step_time_model.h"
#include "schedulers/scheduler.h"
#include "sim/admission.h"
#include "sim/api_latency.h"
#include "sim/cluster.h"
#include "sim/lora.h"
#include "sim/pipeline_engine.h"
#include "sim/scenario_rules.h"
#include "sim/speculative.h"
#include "traces/workload_source.h"

namespace servesim {

// step_time is a section, or the path of a YAML file holding one (what `servesim calibrate
// --out` writes); the file's keys are checked like the scenario's. The engine's host time and
// CUDA graphs (models/host_time.h, keys of `scheduler_owner`'s scheduler) wrap the model, read
// after it so that a bad step_time is reported first.
StepTimeSection read_step_time(const Cfg& root, const Cfg& scheduler_owner) {
  if (!root.is_scalar("step_time")) {
    const Cfg section = root.child("step_time");
    auto model = make_step_time_model(section);
    return {apply_engine_host(scheduler_owner.child("scheduler"), section, std::move(model)),
            section};
  }
  const auto doc = Document::load_file(root.existing_file("step_time", "step-time model file"));
  const Cfg section = Cfg::root(doc);
  auto model = make_step_time_model(section);
  doc->check_all_read();
  return {apply_engine_host(scheduler_owner.child("scheduler"), section, std::move(model)),
          section};
}

namespace {

// The optional `slo` section; SloTargets::accelerators is left for accelerators_of() unless
// the section gives it.
std::optional<SloTargets> read_slo(const Cfg& root) {
  // `slo:` with nothing under it is null, which Cfg takes for "not given": refuse it, at the key.
  const YAML::Node top = root.doc().root();
  if (top.IsMap())
    for (const auto& kv : top)
      if (kv.first.IsScalar() && kv.first.Scalar() == "slo" && kv.second.IsNull())
        throw InputError(
            fmt::format("slo at {}: an empty section: give ttft_ms, tpot_ms, e2e_ms, "
                        "itl_ms or several",
                        root.doc().where(kv.first, "slo")));
  const std::optional<Cfg> c = root.optional_child("slo");
  if (!c) return std::nullopt;
  constexpr RealRange k_target{0.0, 1e9, true};  // up to 11.6 days: whole ns fit in 64 bits
  SloTargets t;
  t.ttft_ms = c->optional_real("ttft_ms", k_target);
  t.tpot_ms = c->optional_real("tpot_ms", k_target);
  t.e2e_ms = c->optional_real("e2e_ms", k_target);
  t.itl_ms = c->optional_real("itl_ms", k_target);
  t.percentile = c->get_real("percentile", 99.0, {0.0, 100.0, true});
  t.accelerators = c->get_int("accelerators", 0, {1, 1 << 20});  // 0: not given
  if (!t.ttft_ms && !t.tpot_ms && !t.e2e_ms && !t.itl_ms)
    c->fail("", "needs ttft_ms, tpot_ms, e2e_ms, itl_ms or several");
  return t;
}

}  // namespace

// The accelerators one simulated server stands for, when `slo.accelerators` is not given: what
// the step-time model prices (tensor_parallel x data_parallel), else the tensor-parallel group
// the KV capacity was sized for (kv.memory), else 1. REQUIRES: the sections have been read and
// checked (the values are then in range, and no key is read here that was not allowed there).
int64_t accelerators_of(const Cfg& step_time, const Cfg& kv) {
  // Pipeline stages multiply the accelerators a replica holds (models/pipeline.h).
  if (step_time.has("tensor_parallel") || step_time.has("data_parallel") ||
      step_time.has("pipeline_parallel"))
    return step_time.get_int("tensor_parallel", 1, {1, 1024}) *
           step_time.get_int("data_parallel", 1, {1, 1024}) *
           step_time.get_int("pipeline_parallel", 1, {1, 1024});
  if (const std::optional<Cfg> memory = kv.optional_child("memory"))
    return memory->get_int("tensor_parallel", 1, {1, 1024}) *
           memory->get_int("pipeline_parallel", 1, {1, 1024});
  return 1;
}

namespace {

// The power of the accelerator a group runs on: the catalogue entry (or file) named by
// `step_time.hardware`, else `kv.memory.hardware`; none when neither names one or it has no
// `power`. REQUIRES: as accelerators_of.
std::optional<PowerSpec> power_of(const Cfg& step_time, const Cfg& kv) {
  if (step_time.has("hardware")) return read_hardware(step_time, "hardware").power;
  if (const std::optional<Cfg> memory = kv.optional_child("memory"))
    if (memory->has("hardware")) return read_hardware(*memory, "hardware").power;
  return std::nullopt;
}

}  // namespace

AcceleratorInfo accelerator_info_of(const Cfg& step_time, const Cfg& kv) {
  if (step_time.has("hardware")) {
    const HardwareSpec hw = read_hardware(step_time, "hardware");
    return {hw.memory_gib, hw.name};
  }
  if (const std::optional<Cfg> memory = kv.optional_child("memory")) {
    if (memory->has("hardware")) {
      const HardwareSpec hw = read_hardware(*memory, "hardware");
      return {hw.memory_gib, hw.name};
    }
    if (memory->has("accelerator_gib"))
      return {plausible_real(*memory, "accelerator_gib", units::k_accelerator_gib), ""};
  }
  return {};
}

namespace {

// What the `lora` section needs of the rest: one engine kind (no pools), and the roofs its
// GEMMs are costed on (the step-time model's, or the section's peak_tflops and
// peak_memory_gbps).
void check_lora(const Cfg& root, const LoraSpec& lora, const std::vector<ReplicaParts>& reps) {
  const Cfg c = root.child("lora");
  if (reps.empty())
    c.fail("", "is not modelled with cluster.pools (docs/lora.md); use cluster.replicas");
  StepShape probe;
  probe.sequences = 1;
  probe.decode_sequences = 1;
  probe.decode_context_tokens = probe.decode_context_max = probe.decode_context_min = 1;
  if ((!lora.peak_flops_per_s || !lora.peak_bytes_per_s) && !reps.front().step_time->cost(probe))
    c.fail("peak_tflops",
           "needs peak_tflops and peak_memory_gbps: the step-time model reports no roofline "
           "cost to put the LoRA GEMMs on (docs/lora.md#cost)");
}

// What cluster.autoscale needs of the rest: the `slo` section for the slo signal, and the
// catalogue's price of a replica for its cost.
std::shared_ptr<const AutoscaleSpec> complete_autoscale(const Cfg& root, const AutoscaleSpec& read,
                                                        const std::optional<SloTargets>& slo,
                                                        const std::vector<AcceleratorGroup>& g) {
  auto spec = std::make_shared<AutoscaleSpec>(read);
  if (spec->signal == ScaleSignal::Slo) {
    if (!slo || (!slo->ttft_ms && !slo->tpot_ms && !slo->e2e_ms))
      root.child("cluster")
          .child("autoscale")
          .fail("signal",
                "slo needs an `slo` section with ttft_ms, tpot_ms or e2e_ms (the attainment "
                "it scales on checks those)");
    spec->slo = slo;
  }
  spec->accelerators_per_replica = accelerators_of(g.front().step_time, g.front().kv);
  if (g.front().step_time.has("hardware")) {
    const HardwareSpec hw = read_hardware(g.front().step_time, "hardware");
    const PriceQuote* price = hw.price(k_default_price_tier);
    if (price == nullptr) price = hw.price("mixed");
    if (price != nullptr) {
      spec->usd_per_replica_hour =
          price->usd_per_hour * static_cast<double>(spec->accelerators_per_replica);
      spec->price_tier = price->tier;
    }
  }
  return spec;
}

}  // namespace

Scenario build_scenario(std::shared_ptr<Document> doc) {
  Scenario s;
  s.doc = doc;
  const Cfg root = Cfg::root(doc);
  s.seed = static_cast<uint64_t>(root.get_int("seed", 1, {0, std::numeric_limits<int64_t>::max()}));
  // With cluster.pools, the pools build every replica (the top-level sections are defaults).
  std::optional<Cfg> top_step_time;
  if (!has_pools(root)) {
    ReplicaParts parts;
    parts.kv = make_kv_manager(root.child("kv"), &read_kv_memory);
    StepTimeSection step_time = read_step_time(root, root);
    parts.step_time = std::move(step_time.model);
    top_step_time = step_time.section;
    parts.scheduler = make_scheduler(root.child("scheduler"),
                                     accelerator_info_of(step_time.section, root.child("kv")));
    check_scheduler_and_kv(root.child("scheduler"), root.child("kv"));
    bind_scheduler_to_kv(root.child("scheduler"), *parts.scheduler, *parts.kv);
    s.components.replicas.push_back(std::move(parts));
  }
  s.components.source = make_workload(root.child("workload"), s.seed);
  if (const std::optional<ApiLatency> api = read_api_latency(root))
    s.components.source = with_api_latency(std::move(s.components.source), *api);
  std::vector<AcceleratorGroup> groups =
      read_cluster(root, s.seed, s.components, top_step_time ? &*top_step_time : nullptr);
  if (groups.empty()) groups.push_back({*top_step_time, root.child("kv"), 1});
  s.components.speculative = read_speculative(root, top_step_time ? &*top_step_time : nullptr);
  s.components.seed = s.seed;
  if (s.components.speculative)
    for (const ReplicaParts& p : s.components.replicas)
      if (!p.scheduler->speculative_decoding())
        root.child("speculative")
            .fail("",
                  "needs a scheduler that plans speculative decoding: kind vllm (0.8 and "
                  "later), sglang or trtllm (docs/speculative.md)");
  s.components.lora = read_lora(root, top_step_time ? &*top_step_time : nullptr);
  if (s.components.lora) {
    check_lora(root, *s.components.lora, s.components.replicas);
    s.components.source =
        with_lora_adapters(std::move(s.components.source), s.components.lora, s.seed);
  }
  s.slo = read_slo(root);
  s.components.admission = read_admission(root, s.slo);
  const std::shared_ptr<FailureSpec> failures =
      read_failures(root, static_cast<int64_t>(s.components.replicas.size()));
  s.benchmark = read_benchmark(root);
  doc->check_all_read();
  // Every replica has its own accelerators (read only now that every key has been checked).
  int64_t accelerators = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const int64_t each = accelerators_of(groups[i].step_time, groups[i].kv);
    accelerators += each * groups[i].replicas;
    s.replica_accelerators.insert(s.replica_accelerators.end(), groups[i].replicas, each);
    if (i < s.components.pools.size()) s.components.pools[i].accelerators_per_replica = each;
  }
  if (s.slo && s.slo->accelerators == 0) s.slo->accelerators = accelerators;
  if (s.components.autoscale)
    s.components.autoscale = complete_autoscale(root, *s.components.autoscale, s.slo, groups);
  if (failures) {
    failures->accelerators = s.replica_accelerators;
    s.components.failures = failures;
  }
  for (const AcceleratorGroup& g : groups) {
    const std::optional<PowerSpec> power = power_of(g.step_time, g.kv);
    if (!power) {
      s.replica_power.clear();
      break;
    }
    s.replica_power.insert(s.replica_power.end(), g.replicas, *power);
  }
  check_pipeline_schedule(root, s.components);
  return s;
}

}  // namespace servesim
