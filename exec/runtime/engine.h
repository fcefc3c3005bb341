// The engine: runs a validated zb::Schedule on a backend for several training steps.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "exec/runtime/backend.h"
#include "exec/runtime/model_config.h"
#include "exec/runtime/optimizer.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"

namespace zb::exec {

// sync: all stages wait for the global norm and finite flag, then step. post_validation: each
// stage steps as soon as its gradients are complete and rolls back if the verdict disagrees.
enum class SyncMode { sync, post_validation };
SyncMode parse_sync_mode(std::string_view text);  // throws InputError
std::string_view sync_mode_name(SyncMode mode);

// Poison one gradient element of `stage` in `step` (tests the non-finite skip).
struct NonfiniteInjection {
  int step = 0;
  int stage = 0;
};
NonfiniteInjection parse_injection(std::string_view text);  // "STEP:STAGE"; throws InputError

struct ExecOptions {
  ModelConfig model;
  OptimizerConfig optimizer;
  SyncMode mode = SyncMode::sync;
  int steps = 1;
  std::optional<NonfiniteInjection> inject_nonfinite;
  // Refuse schedules whose channels would deliver out of order before running (see
  // sim/core/detail/channel_order.h). Off only in tests that show the runtime check on receipt.
  bool check_channel_order = true;
  // Keep every stage's weights after the last step (ExecResult::weights). In a multi-process run
  // they travel to device 0's process; turn off when nobody compares them.
  bool gather_weights = true;
};

struct StepReport {
  double loss = 0;           // mean loss of the step, computed with the weights before its update
  StepDecision decision;     // the global verdict
  int early_steps = 0;       // post-validation: stages that stepped before the verdict
  int rollbacks = 0;         // ... of which rolled back and redid the step
};

// Everything below is filled in the process that holds device 0 (every process in a one-process
// run); a multi-process run's other ranks get an empty result with gathered = false.
struct ExecResult {
  bool gathered = false;
  std::vector<StepReport> steps;
  // One measured trace per step: compute spans of every action, memory timeline per device, times
  // in ms from the step's first action start on any device.
  std::vector<zb::Trace> traces;
  // Per step: where its trace's time 0 lies, in ms from the first step's (so that a span's time on
  // one clock is origin + its time: the steady-state period, exec/calibration/predict.h).
  std::vector<double> step_origins_ms;
  std::vector<double> peak_activation_bytes;  // per device, from the tracker
  ModelWeights weights;                       // after the last step, in layer order (if gathered)
};

// The measured steps as one trace on the first step's clock (span.step = k, times shifted by
// step_origins_ms[k]): what the Chrome trace shows. Metrics are the first step's, as for every
// multi-step trace.
zb::Trace all_steps_trace(const ExecResult& result);

// Validates (zb::validate, channel order, model shape) and runs. Throws ScheduleError or
// InputError before anything runs, ExecError naming device, step and action when a run fails.
ExecResult run_schedule(Backend& backend, const zb::Problem& problem, const zb::Schedule& schedule,
                        const ExecOptions& options);

}  // namespace zb::exec
