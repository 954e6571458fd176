// workload.mix: several workload sources merged into one, each a class of requests
// (docs/workloads.md#mix):
//
//   workload: {mix: {components: [{name: chat, priority: 0, synthetic: {...}},
//                                 {name: batch, priority: 1, trace: {...}}]}}
//
// Each component is a whole workload map (one source of any registered kind, and optionally its
// own transform) plus `name`, its class (required, unique, valid_class_name), and `priority`,
// which when given replaces the priority of every request of the component; without it the
// requests keep their own (a trace's priority column, else 0). `tenant` names the component's
// tenant (valid_class_name; several components may share one; when one component names a
// tenant every one must); `ttft_slo_ms` is its class's TTFT target, which the edf queue order
// turns into each request's deadline; `timeout_s` is its class's client timeout, in place of
// abandonment.timeout_s (sim/admission.h). The component's name replaces
// any class its rows name. Requests are merged by arrival; equal arrivals come in component
// order, then in the component's own order; ids are renumbered 0, 1, 2, ... in merged order.
// Component k draws from its own generator, seeded with mix_component_seed(seed, k), so a
// component's requests do not change when another is added after it. A reactive component
// (closed_loop, or a trace with session or dependency columns) is refused: its on_depart would
// have to be routed back through the merge, which servesim does not do.
#include <fmt/format.h>

#include <optional>
#include <utility>

#include "traces/factories.h"

namespace servesim {
namespace {

class Mix final : public WorkloadSource {
 public:
  struct Part {
    std::unique_ptr<WorkloadSource> source;
    std::optional<int32_t> priority;
    uint16_t tenant = 0;
    Time ttft_slo;
    Time timeout;       // timeout_s: its class's client timeout
    RequestSpec ahead;  // the part's next request, when `more`
    bool more = false;
  };

  Mix(std::vector<Part> parts, std::vector<std::string> names, std::vector<std::string> tenants)
      : m_parts(std::move(parts)), m_names(std::move(names)), m_tenants(std::move(tenants)) {
    for (Part& p : m_parts) p.more = p.source->next(p.ahead);
  }

  bool next(RequestSpec& out) override {
    Part* first = nullptr;
    uint16_t k = 0;
    for (uint16_t i = 0; i < m_parts.size(); ++i) {
      Part& p = m_parts[i];
      // Strictly earlier only: an equal arrival keeps the earlier component.
      if (p.more && (first == nullptr || p.ahead.arrival < first->ahead.arrival)) {
        first = &p;
        k = i;
      }
    }
    if (first == nullptr) return false;
    out = std::move(first->ahead);
    first->ahead = RequestSpec{};  // a source need not set every field of what it fills
    out.id = m_next_id++;
    out.class_id = k;
    if (first->priority) out.priority = *first->priority;
    out.tenant_id = first->tenant;
    out.ttft_slo = first->ttft_slo;
    out.timeout = first->timeout;
    first->more = first->source->next(first->ahead);
    return true;
  }

  size_t size_hint() const override {
    size_t n = 0;
    for (const Part& p : m_parts) {
      if (p.source->size_hint() == 0) return 0;
      n += p.source->size_hint();
    }
    return n;
  }

  /// Each component's counters, named "<component>.<counter>".
  std::vector<std::pair<std::string, int64_t>> counters() const override {
    std::vector<std::pair<std::string, int64_t>> out;
    for (size_t i = 0; i < m_parts.size(); ++i)
      for (auto& [name, n] : m_parts[i].source->counters())
        out.emplace_back(fmt::format("{}.{}", m_names[i], name), n);
    return out;
  }
  int64_t counters_total() const override {
    int64_t total = 0;
    for (const Part& p : m_parts) total += p.source->counters_total();
    return total;
  }

  const std::vector<std::string>& class_names() const override { return m_names; }
  const std::vector<std::string>& tenant_names() const override { return m_tenants; }

 private:
  std::vector<Part> m_parts;
  std::vector<std::string> m_names;
  std::vector<std::string> m_tenants;
  uint64_t m_next_id = 0;
};

}  // namespace

namespace {

// The id of the component's `tenant`, a new one the first time the name is met.
uint16_t tenant_index(const Cfg& part, std::vector<std::string>& tenants) {
  const std::string name = part.get_string("tenant");
  if (!valid_class_name(name))
    part.fail("tenant", fmt::format("\"{}\": a tenant name must be {}", printable(name, 80),
                                    k_class_name_allowed));
  for (size_t j = 0; j < tenants.size(); ++j)
    if (tenants[j] == name) return static_cast<uint16_t>(j);
  tenants.push_back(name);
  return static_cast<uint16_t>(tenants.size() - 1);
}

}  // namespace

uint64_t mix_component_seed(uint64_t seed, size_t index) {
  // SplitMix64's finaliser over the seed stepped by the golden ratio once per component: seeds
  // of neighbouring components (and of neighbouring run seeds) share no visible pattern.
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(index) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::unique_ptr<WorkloadSource> make_mix(const Cfg& c, uint64_t seed) {
  const std::vector<Cfg> components = c.list_of_maps("components");
  if (components.size() > k_max_classes)
    c.fail("components", fmt::format("has {} components; a mix may have at most {}",
                                     components.size(), k_max_classes));
  std::vector<Mix::Part> parts;
  std::vector<std::string> names;
  std::vector<std::string> tenants;
  size_t with_tenant = 0;
  for (const Cfg& part : components) with_tenant += part.has("tenant") ? 1 : 0;
  for (size_t i = 0; i < components.size(); ++i) {
    const Cfg& part = components[i];
    const std::string name = part.get_string("name");
    if (!valid_class_name(name))
      part.fail("name", fmt::format("\"{}\": a class name must be {}", printable(name, 80),
                                    k_class_name_allowed));
    for (size_t j = 0; j < i; ++j)
      if (names[j] == name)
        part.fail("name", fmt::format("\"{}\" is also the name of components[{}]: each "
                                      "component is a class and needs a name of its own",
                                      name, j));
    Mix::Part p;
    if (const auto pr = part.optional_int("priority", {k_min_priority, k_max_priority}))
      p.priority = static_cast<int32_t>(*pr);
    if (with_tenant > 0 && with_tenant < components.size() && !part.has("tenant"))
      part.fail("", fmt::format("components[{}] names no tenant while others do: give every "
                                "component a tenant, or none",
                                i));
    if (with_tenant > 0) p.tenant = tenant_index(part, tenants);
    if (const auto slo = part.optional_real("ttft_slo_ms", {0.0, 1e9, true}))
      p.ttft_slo = Time::from_ms(*slo);
    if (const auto t = part.optional_real("timeout_s", {0.0, 1e6, true}))
      p.timeout = Time::from_seconds(*t);
    p.source = make_workload(part, mix_component_seed(seed, i));
    if (p.source->reactive()) {
      const std::string kind = part.one_of(workload_source_names());
      part.fail(kind,
                "a reactive source (its requests wait for replies: closed_loop, or a "
                "trace with session_id, parent_id or think_s) cannot be a mix component: "
                "run it on its own");
    }
    names.push_back(name);
    parts.push_back(std::move(p));
  }
  return std::make_unique<Mix>(std::move(parts), std::move(names), std::move(tenants));
}

}  // namespace servesim
