#include "core/registry.h"

#include "traces/factories.h"

namespace servesim {

namespace {

// Sorted by name. A new source is one file and one line here.
constexpr Registry<WorkloadFactory, 5> k_sources{{{
    {"closed_loop", &make_closed_loop},
    {"mix", &make_mix},
    {"servegen", &make_servegen},
    {"synthetic", &make_synthetic},
    {"trace", &make_trace},
}}};

}  // namespace

int64_t WorkloadSource::counters_total() const {
  int64_t total = 0;
  for (const auto& c : counters()) total += c.second;
  return total;
}

const std::vector<std::string>& WorkloadSource::class_names() const {
  static const std::vector<std::string> none;
  return none;
}

const std::vector<std::string>& WorkloadSource::tenant_names() const {
  static const std::vector<std::string> none;
  return none;
}

std::vector<std::string> workload_source_names() { return k_sources.names(); }

std::unique_ptr<WorkloadSource> make_workload(const Cfg& workload, uint64_t seed) {
  const std::string kind = workload.one_of(k_sources.names());
  const WorkloadFactory make = k_sources.find(kind);
  const Cfg section = workload.child(kind);
  const std::optional<Cfg> transform = workload.optional_child("transform");
  if (!transform) return make(section, seed);
  return make_transform(
      *transform, [make, section, seed] { return make(section, seed); }, seed);
}

}  // namespace servesim
