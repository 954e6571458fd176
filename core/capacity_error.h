#pragma once
// The one kind of refused input that is about capacity, not a mistake: the deployment cannot
// hold what it is asked to (the weights do not fit the accelerator's memory, no memory is left
// for the KV cache). A sizing sweep marks a point refused so infeasible and goes on; any other
// InputError at a point stops the sweep with status 2 (sizing/sweep_run.h).
#include "core/errors.h"

namespace servesim {

class CapacityError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace servesim
