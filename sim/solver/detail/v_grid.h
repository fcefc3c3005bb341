// A V building block's schedule made on its slot grid: laid out once per microbatch, squeezed, W put into the gaps.
#pragma once

#include <string>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"
#include "sim/solver/detail/v_controllable.h"

namespace zb::detail {

// The block repeated m times on a grid of unit slots (one pass per device and slot), W put into
// the gaps, squeezed without raising the largest device peak (first with the W placed, then with W
// left to fill the gaps), W put back in: the per-device order, named `name`. v-min and v-half are
// the spec's steps; v-auto (`rebuild`) also rebuilds the warm-up and cool-down where that is
// shorter on the grid. Only the order leaves the grid (the evaluator times it for real).
Schedule squeezed_block_schedule(const Problem& problem, const VBlock& block, std::string name, bool rebuild);

}  // namespace zb::detail
