// List-scheduled end times of an order (v = 1), the solver's own fast copy of the evaluator's rule,
// pinned to the evaluator by tests/solver/test_list_timing.cpp over random orders and costs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"
#include "sim/solver/detail/split_pass.h"
#include "sim/solver/detail/time_grid.h"

namespace zb {

// End times indexed [stage][split_index(pass): F, B, W][microbatch], and each stage's span.
struct ListTiming {
  std::vector<std::vector<std::vector<double>>> end;
  std::vector<double> stage_span;  // end of last - start of first action
  double span = 0;                 // the largest stage span
};

// Each device runs its list in order; an action starts at max(device free, input ready + t_comm).
// Requires chunks = 1 and split passes (F, B, W). Throws ScheduleError on a deadlock.
ListTiming list_timing(const Problem& problem, const Schedule& schedule);

// The same rule on the time grid's integers (costs from stage_ticks): the span the heuristic
// compares, exact however the sums are grouped.
Ticks list_span_ticks(const Problem& problem, const StageTicks& ticks, const Schedule& schedule);

// How many list timings of `problem` cost as many actions timed as `timings` timings at p=16
// m=64 (the certificate bench's largest shape): a timing costs its 3pm actions, so a search budget
// given in timings there stays a budget of work on every shape (a p=2000 problem gets a few
// timings, not minutes). At least 1; `timings` is capped first, so the product cannot overflow.
std::int64_t timings_of_equal_work(const Problem& problem, std::int64_t timings);

// The span and, per pass (F, B, W), the sum of its actions' ends on the grid (the local search's
// tie-breakers).
struct ListSpanTicks {
  Ticks span = 0;
  std::array<Ticks, kSplitPassCount> end_sum{};  // [split_index(pass)]
};
ListSpanTicks list_spans_ticks(const Problem& problem, const StageTicks& ticks, const Schedule& schedule);

}  // namespace zb
