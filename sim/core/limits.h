// The sizes the tools accept, checked before anything is allocated: beyond them a run would not
// fit in memory or not finish, so a bigger size is bad input (exit 2) whose message names the
// limit. docs/design.md section 8 lists them beside the exit codes.
#pragma once

#include <string_view>

namespace zb {

struct Problem;

// Actions (an F, a B and a W per microbatch and stage: p x chunks x m x 3) in one schedule. The
// generators, the validator and the evaluator keep a few tens of bytes and do a few steps per
// action, a trace and its drawings a few hundred bytes: 10^7 actions is about 2 GiB and seconds,
// 40 times the largest real pipeline (p=64, chunks=4, m=1024 is 786,432).
inline constexpr double kMaxActions = 1e7;

// The greedy searches (zb-auto, frontier) step every device for every action, in 8 variants:
// their work grows with actions x stages, measured at 5 s per 3 x 10^9 (p=1000, m=1000). One run
// may do that much; a frontier runs once per memory limit and shares the same budget.
inline constexpr double kMaxSolverWork = 3e9;

// Throws InputError "SOURCE: p=P x chunks=V x m=M is N actions, over the limit of 10000000 per
// schedule" before a problem of that shape is built.
void check_action_count(double devices, double chunks, double microbatches, std::string_view source);

// Throws InputError naming `what` when `runs` greedy searches on `problem` exceed kMaxSolverWork.
void check_solver_work(const Problem& problem, double runs, std::string_view what);

}  // namespace zb
