// The solvers' one rule for comparing times: every cost is rounded once to a decimal grid, and
// from then on the heuristic adds and compares integers. Sums of the same costs are then equal
// however they were added (a tie is a tie, not float noise), and the same problem written in ms
// or in us lands on the same integers (docs/design.md section 5).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/problem.h"

namespace zb {

using Ticks = std::int64_t;

// A step of 10^(d-9) time units, where 10^d <= the largest cost or transfer < 10^(d+1): ten
// significant digits of the largest cost, so costs written with that many digits are exact and
// one step is at most 1e-9 of it. Changing the time unit by a power of ten moves d and the step
// with it, so the integers do not change.
class TimeGrid {
 public:
  explicit TimeGrid(const Problem& problem);

  Ticks ticks(double time) const;  // the nearest grid point
  double time(Ticks ticks) const;  // back in the problem's unit
  double step() const;

 private:
  int exponent_ = 0;  // step = 10^exponent_
};

// One chunk per device: each stage's F, B, W and the transfer after it, on the grid.
struct StageTicks {
  std::vector<Ticks> f, b, w, comm_after;
};
StageTicks stage_ticks(const Problem& problem, const TimeGrid& grid);

// `problem` with every cost and transfer replaced by its grid integer (as a double), for the
// solvers' helpers that take a Problem (the lower bound) but must speak in grid units.
Problem on_grid(const Problem& problem, const TimeGrid& grid);

}  // namespace zb
