// The head of every lower bound on a device's span: from its first action until a backward can
// start on it, a device can only run forwards. One owner for the length of that chain, used by
// the solver's span bounds (lower_bound.h), the order search and recommend's step-time bound
// (sim/app/plan/detail/step_bound.h).
#pragma once

#include "sim/core/problem.h"

namespace zb {

// From the start of a microbatch's F on `stage` to the earliest start of its B there (one model
// copy, the microbatch's path running on to the last stage): that F, then the F and B of every
// stage below, and each boundary below crossed twice.
double return_trip(const Problem& problem, int stage);

// C(d): the least time from device d's first action to the start of any B or fused BW on it,
// whatever the order. Such a backward, on a stage t of some microbatch's path, needs that
// microbatch's forward from s0, the first of d's stages on the path (it runs on d, so it starts
// at d's first action or later), through the path's last stage, and its backward from there
// back to t + 1, the transfers between devices included; a backward takes the cheaper of B and
// the fused BW where one is given. The least such chain over d's stages and the paths through
// them (the first and the last microbatch's path cover every placement). With one chunk per
// device it is return_trip(d) (up to rounding). 0 when no path runs through d.
double head_chain(const Problem& problem, int device);

}  // namespace zb
