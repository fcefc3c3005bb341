// A lower bound on the steady-state step time of every schedule of a problem: what recommend's
// search prunes with (docs/design.md section 19). The proof is in step_bound.cpp.
#pragma once

#include "sim/core/problem.h"

namespace zb::plan {

struct StepBound {
  double compute = 0;  // the busiest device's F, B and W per step
  double bound = 0;    // compute, plus the ramp a device cannot fill and its optimizer update
};

// In the problem's time unit. `bound` holds for every schedule whose row is ok (within the
// problem's memory limit); with overlap > 0 two passes may share a device and it is 0.
StepBound step_time_bound(const Problem& problem);

}  // namespace zb::plan
