#include "core/registry.h"

#include "models/factories.h"
#include "models/pipeline.h"

namespace servesim {
namespace {

// Sorted by name. A new model is one file and one line here.
constexpr Registry<StepTimeFactory, 5> k_models{{{
    {"layer_profile", &make_layer_profile_model},
    {"linear", &make_linear_model},
    {"operator", &make_operator_model},
    {"roofline", &make_roofline_model},
    {"table", &make_table_model},
}}};

}  // namespace

std::vector<std::string> step_time_model_names() { return k_models.names(); }

std::unique_ptr<StepTimeModel> make_step_time_model(const Cfg& c) {
  // `cpu_overhead` is common to every kind, so it is read here rather than by each model.
  // So is `pipeline_parallel` (models/pipeline.h), which splits a kind's step into stages.
  return apply_cpu_overhead(c, make_pipelined(c, k_models.pick(c, "kind")));
}

}  // namespace servesim
