// The error for a model setup that is well formed but cannot run (does not fit, too few GPUs).
#pragma once

#include "models/errors.h"

namespace zb::models {

// Raised when a combination of model, hardware, cluster and shape cannot run: the parameters do
// not fit in device memory, the cluster has fewer GPUs than devices, more stages than layers.
// A sweep turns it into an infeasible row; a single scenario reports it as bad input (exit 2).
class SetupInfeasible : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace zb::models
