// The evaluator: exact list scheduling of a schedule against a problem (docs/design.md section 7).
#pragma once

#include "sim/core/optimizer_step.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"

namespace zb {

struct EvalOptions {
  bool record_spans = true;      // compute spans (and transfers when t_comm > 0)
  bool record_transfers = true;  // send/recv spans for transfers between devices
  bool record_memory = true;     // memory timeline per device
  // Consecutive training steps; between two, each device waits for its optimizer step
  // (optimizer_step.h): for the all-reduced norm and its update (sync), or only for its own
  // update (post-validation).
  int steps = 1;
  OptimizerStep optimizer{};
};

// Each device runs its list in order; an action starts at max(device free, input ready + t_comm).
// Metrics (of the first step) and the trace's step_ends are always filled. Throws ScheduleError with a device x step report on deadlock, and
// on actions outside the problem (bad chunk or microbatch). Run validate() first for full checks.
Trace evaluate(const Problem& problem, const Schedule& schedule, const EvalOptions& options = {});

}  // namespace zb
