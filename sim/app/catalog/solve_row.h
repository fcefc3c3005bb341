// zb-ilp on one problem as a result row: what `zbsim solve` prints and the Python module's
// solve() returns.
#pragma once

#include <string_view>

#include "sim/app/catalog/run_row.h"
#include "sim/core/trace.h"
#include "sim/solver/ilp_solver.h"

namespace zb::catalog {

struct SolveRun {
  IlpResult result;
  ResultRow row;  // "zb-ilp", the ILP's status, its numbers as extras (design.md section 8)
  Trace trace;    // the evaluator's trace of the schedule found
};

// Checks the options (InputError naming --node-limit, --time-limit or --threads), solves, and runs the schedule
// found through the evaluator. An infeasible limit is a ScheduleError naming `limit_source` (the
// flag or file the limit came from).
SolveRun solve_row(const Problem& problem, const IlpOptions& options, std::string_view limit_source);

}  // namespace zb::catalog
