// The single-device reference: all layers on one device, microbatches in order, same optimizer.
#pragma once

#include <optional>
#include <vector>

#include "exec/runtime/device.h"
#include "exec/runtime/engine.h"
#include "exec/runtime/model_config.h"
#include "exec/runtime/optimizer.h"

namespace zb::exec {

struct ReferenceResult {
  std::vector<StepReport> steps;
  ModelWeights weights;
};

// Trains with plain F, B, W per microbatch on one device. `stages` only locates the layer an
// injected non-finite gradient goes to (the first layer of the injected stage, as in the pipeline).
ReferenceResult run_reference(Device& device, const ModelConfig& model,
                              const OptimizerConfig& optimizer, int microbatches, int steps,
                              std::optional<NonfiniteInjection> inject, int stages);

}  // namespace zb::exec
