#include <array>
#include <utility>

#include "schedulers/scheduler.h"

namespace servesim {
namespace {

// Sorted by name. A new scheduler is one file and one line here.
constexpr std::array<std::pair<const char*, SchedulerFactory>, 3> k_schedulers{{
    {"continuous", &make_continuous},
    {"dynamic", &make_dynamic},
    {"static", &make_static},
}};

}  // namespace

std::vector<std::string> scheduler_names() {
  std::vector<std::string> out;
  for (const auto& [name, f] : k_schedulers) out.emplace_back(name);
  return out;
}

std::unique_ptr<Scheduler> make_scheduler(const Cfg& c) {
  const std::string kind = c.get_choice("kind", scheduler_names());
  for (const auto& [name, factory] : k_schedulers)
    if (kind == name) return factory(c);
  c.fail("kind", "unreachable");
}

}  // namespace servesim
