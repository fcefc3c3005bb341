// How long actions take: a pass alone, and an overlapped pair (Action::overlap_next) as one block.
// The one owner of these rules for the evaluator, the SimGrid engine and the drawings.
#pragma once

#include "sim/core/action.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// A pass run alone: its compute (t_f, t_b, t_w or t_bw) plus its all-to-all (t_a2a; W has none),
// which nothing hides. A copy (O, L): t_offload, on the copy engine.
double pass_time(const Problem& problem, Pass pass, int stage);

// The problem a planner (the solvers, the cost-driven generators) sees: each pass's time alone,
// its all-to-all in its compute (t_a2a empty). Planners build schedules without overlapped pairs,
// where that is exactly what the evaluator charges.
Problem with_all_to_all_in_compute(const Problem& problem);

// An overlapped pair: both parts start together and finish together after `total()`. The block
// takes c1 + c2 - overlap * min(c1, c2) of compute (c: the parts' compute times) plus, for each
// part's all-to-all a, what the partner's compute c' does not hide: (1 - a2a_overlap) a is exposed;
// the hidden share h = a2a_overlap a slows c' by the SMs it takes (comm_sm_share s), costing s h
// when h (1 - s) <= c', else h - c'. With s = 0 and a2a_overlap 1: max(0, a1 - c2) + max(0, a2 - c1).
// `first` and `second` split the block in proportion to the parts' times alone: what a trace
// records and draws for each part, one box in two colours.
struct BlockTimes {
  double first = 0;
  double second = 0;
  double total() const { return first + second; }
};

BlockTimes overlapped_times(const Problem& problem, Pass first, int first_stage, Pass second, int second_stage);

// The bubble-rate denominator's work for this schedule: the largest Problem::device_work less what
// the device's overlapped pairs save (overlap * min(c1, c2) each), so that the saving is not a
// negative bubble; exposed all-to-all stays bubble. Without pairs, or with overlap 0, it is
// Problem::work().
double compute_work(const Problem& problem, const Schedule& schedule);

}  // namespace zb
