// Runs sweep points in parallel (threads for the evaluator, forked workers for SimGrid) and hands
// each finished row over in point order.
#pragma once

#include <functional>
#include <vector>

#include "sim/app/sweep/grid.h"
#include "sim/app/sweep/row.h"

namespace zb::sweep {

// Runs `points` (indices into the grid, ascending) with `jobs` workers and calls `done` for every
// row in the order of `points`, from one thread at a time. With processes, each worker is a
// forked child (the SimGrid engine forks a child per simulation itself and must not be called
// from several threads at once); rows travel back through pipes.
void run_points(const Grid& grid, const std::vector<long>& points, int jobs, bool processes,
                      const std::function<void(const Row&)>& done);

}  // namespace zb::sweep
