#pragma once
// Each step-time model's factory, for the registry (models/registry.cpp), the models' own files
// and tests only. Everyone else builds a model with make_step_time_model
// (models/step_time_model.h).
#include <cstdint>
#include <memory>

#include "core/config.h"
#include "models/step_time_model.h"

namespace servesim {

using StepTimeFactory = std::unique_ptr<StepTimeModel> (*)(const Cfg& step_time);

std::unique_ptr<StepTimeModel> make_layer_profile_model(const Cfg& c);
std::unique_ptr<StepTimeModel> make_table_model(const Cfg& c);
std::unique_ptr<StepTimeModel> make_linear_model(const Cfg& c);
std::unique_ptr<StepTimeModel> make_operator_model(const Cfg& c);
std::unique_ptr<StepTimeModel> make_roofline_model(const Cfg& c);
/// The operator model with `layers` layers instead of the model's own (0: its own), for the
/// pipeline model's per-stage split (models/pipeline.cpp).
std::unique_ptr<StepTimeModel> make_operator_stage_model(const Cfg& c, int64_t layers);

}  // namespace servesim
