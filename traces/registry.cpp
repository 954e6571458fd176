#include <array>
#include <utility>

#include "traces/workload_source.h"

namespace servesim {
namespace {

// Sorted by name. A new source is one file and one line here.
constexpr std::array<std::pair<const char*, WorkloadFactory>, 2> k_sources{{
    {"synthetic", &make_synthetic},
    {"trace", &make_csv_trace},
}};

}  // namespace

std::vector<std::string> workload_source_names() {
  std::vector<std::string> out;
  for (const auto& [name, f] : k_sources) out.emplace_back(name);
  return out;
}

std::unique_ptr<WorkloadSource> make_workload(const Cfg& workload, uint64_t seed) {
  const std::string kind = workload.one_of(workload_source_names());
  for (const auto& [name, factory] : k_sources)
    if (kind == name) return factory(workload.child(kind), workload.doc().base_dir(), seed);
  workload.fail(kind, "unreachable");
}

}  // namespace servesim
