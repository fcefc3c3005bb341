// zb-1p-official and zb-2p-official: ZB-1p and ZB-2p as the Zero Bubble authors' runtime builds them
// (sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/zerobubble/runtime.py),
// not zbsim's stronger search (docs/design.md section 5).
#pragma once

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// The costs the runtime plans on: each of t_f, t_b, t_w (and t_bw) replaced on every stage by its
// upper median over the stages (`sorted(f)[len(f) // 2]`: "uniform f/b/w timing"), every boundary's
// t_comm by the largest (its P2P benchmark is all-reduced with MAX); memory stays per stage (the
// runtime keeps each stage's measured f_mem, b_mem, w_mem). Requires one chunk per device.
Problem official_runtime_planning_problem(const Problem& problem);

// The runtime's schedule: its heuristic's 8 variants (zb.initial_solution) on the planning costs,
// at the limit times_p * p * M_B (`--zero-bubble-max-pending-backward` = times_p * p, in units of
// max(f_mem[:2]), which is Problem::activation_unit), the first strictly shortest on those costs.
// The order is what runs; the evaluator times it on the problem's own costs. Throws ScheduleError
// naming the limit when no variant fits it.
Schedule official_runtime_schedule(const Problem& problem, int times_p);

}  // namespace zb
