// The optimizer step between training steps (docs/design.md section 7): the two modes, the
// gradient-norm all-reduce, when each device may start its next step, and the steady-state period.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// A message of the gradient-norm all-reduce: the partial sum (one double), as the executor sends it.
inline constexpr double kGradNormBytes = 8;

// sync: every device waits for the all-reduced gradient norm, then updates. post_validation:
// every device updates as soon as its own gradients are ready and starts its next step; the
// all-reduce validates the update in the background.
enum class OptimizerMode { sync, post_validation };
std::string_view optimizer_mode_name(OptimizerMode mode);  // "sync", "post_validation"

// The mode a schedule is normally run with: post-validation for the zero-bubble family (the
// schedules that split a backward into B and W: zb-*, v-*, dualpipe-v, as the paper ran them),
// synchronous for the others (gpipe, 1f1b, 1f1b-i).
OptimizerMode normal_optimizer_mode(const Schedule& schedule);

// How the optimizer step is run.
struct OptimizerStep {
  OptimizerMode mode = OptimizerMode::sync;
  // Post-validation where every verdict disagrees: the device restores its early update once the
  // verdict arrives and redoes it (another t_opt) before its next step.
  bool rollback = false;
  // Post-validation as zbexec runs it (docs/design.md section 9): the early update overlaps the
  // all-reduce, but the next step waits for the verdict.
  bool await_verdict = false;
};

// One step's optimizer timing for every device, from when each device's gradients are ready
// (the end of its last action). The all-reduce is the executor's protocol (docs/design.md
// section 9): the partial sum goes from stage S-1 down to stage 0, each stage adding its own once
// its device's gradients are ready, a hop of t_reduce_hop where the stages are on different
// devices; stage 0's device then sends the verdict to every other device (one hop each).
struct StepBoundary {
  std::vector<double> verdict;  // per device: when the reduced norm has arrived
  std::vector<double> ready;    // per device: when its update is final and its next step may start
};

// When device d's gradients are ready for the optimizer step: the end of its last action
// (`last_end`), or later when data parallelism has to reduce them (Problem::t_dp_reduce). Each
// stage's gradients are all-reduced over its replicas bucket by bucket as its last weight-gradient
// pass (the stage's last W or BW) produces them, as Megatron's overlapped gradient reduction does:
// the reduction starts with that pass, on the device's communication stream beside the compute,
// the device's stages one after another in the order their last pass starts; so it hides under
// whatever compute the schedule leaves after that start. Only the share dp_reduce_overlap of each
// stage's reduction runs so; the rest follows the device's last action (frameworks that reduce
// after the whole pipeline). `last_weight_grad_start` is per stage (only device d's are read).
double gradients_ready(const Problem& problem, int device, double last_end,
                       const std::vector<double>& last_weight_grad_start);

// Whether gradients_ready reads `last_weight_grad_start` at all (only under data parallelism):
// an engine may skip tracking those starts otherwise.
bool needs_weight_grad_starts(const Problem& problem);

// The ordered device pairs the all-reduce's messages cross (partials, then the verdicts).
std::vector<std::pair<int, int>> all_reduce_hops(const Problem& problem);

StepBoundary step_boundary(const Problem& problem, const std::vector<double>& gradients_ready,
                           const OptimizerStep& optimizer);

// The steady-state step time from step_ends (per step: the latest `ready` of that step): the
// period (end of step N - end of step 1) / (N - 1), or the first step's end when N = 1.
double steady_step_time(const std::vector<double>& step_ends);

// Post-validation's expected step time when a fraction `rollback_rate` of the steps roll back:
// the interpolation between the period without rollbacks and the period when every step rolls
// back (deterministic: no random draws).
double expected_post_validation_time(double no_rollback, double every_rollback, double rollback_rate);

}  // namespace zb
