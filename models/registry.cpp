#include <array>
#include <utility>

#include "models/step_time_model.h"

namespace servesim {
namespace {

// Sorted by name. A new model is one file and one line here.
constexpr std::array<std::pair<const char*, StepTimeFactory>, 2> k_models{{
    {"linear", &make_linear_model},
    {"table", &make_table_model},
}};

}  // namespace

std::vector<std::string> step_time_model_names() {
  std::vector<std::string> out;
  for (const auto& [name, f] : k_models) out.emplace_back(name);
  return out;
}

std::unique_ptr<StepTimeModel> make_step_time_model(const Cfg& c) {
  const std::string kind = c.get_choice("kind", step_time_model_names());
  for (const auto& [name, factory] : k_models)
    if (kind == name) return factory(c);
  c.fail("kind", "unreachable");
}

}  // namespace servesim
