// What one device's worker produces in a run, and its wire form for gathering it at device 0.
#pragma once

#include <utility>
#include <vector>

#include "exec/runtime/model_config.h"
#include "exec/runtime/optimizer.h"
#include "sim/core/trace.h"

namespace zb::exec {

// One step as one device saw it.
struct DeviceStepOutcome {
  StepDecision decision;  // the verdict it applied (the same on every device)
  double loss_sum = 0;   // the last stage's summed loss (0 on other devices)
  bool has_loss = false; // this device holds the last stage
  int early_steps = 0;   // post-validation: its stages that stepped before the verdict
  int rollbacks = 0;     // ... and rolled back
};

struct DeviceOutput {
  std::vector<std::vector<zb::Span>> spans;             // per step, times in us since the epoch
  std::vector<std::vector<zb::MemoryPoint>> memory_us;  // per step
  std::vector<DeviceStepOutcome> steps;
  double peak_bytes = 0;
  std::vector<std::pair<int, ModelWeights>> stage_weights;  // (stage, its layers) after the last step
};

// A flat list of doubles, the payload of a control message (floats and ints survive exactly).
std::vector<double> encode(const DeviceOutput& output);
// Throws ExecError when `values` is not a well-formed encoding; spans get `device` as their device.
DeviceOutput decode_device_output(const std::vector<double>& values, int device);

}  // namespace zb::exec
