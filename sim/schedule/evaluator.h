// The evaluator: exact list scheduling of a schedule against a problem (docs/design.md section 7).
#pragma once

#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"
#include "sim/schedule/trace.h"

namespace zb {

struct EvalOptions {
  bool record_spans = true;      // compute spans (and transfers when t_comm > 0)
  bool record_transfers = true;  // send/recv spans for transfers between devices
  bool record_memory = true;     // memory timeline per device
};

// Each device runs its list in order; an action starts at max(device free, input ready + t_comm).
// Metrics are always filled. Throws ScheduleError with a device x step report on deadlock, and
// on actions outside the problem (bad chunk or microbatch). Run validate() first for full checks.
Trace evaluate(const Problem& problem, const Schedule& schedule, const EvalOptions& options = {});

}  // namespace zb
