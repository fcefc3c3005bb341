// The size limits (see limits.h).
#include "sim/core/limits.h"

#include <fmt/format.h>

#include "sim/support/error.h"
#include "sim/core/problem.h"

namespace zb {

void check_action_count(double devices, double chunks, double microbatches, std::string_view source) {
  const double actions = devices * chunks * microbatches * 3;
  if (actions > kMaxActions) {
    throw InputError(fmt::format("{}: p={} x chunks={} x m={} is {:.0f} actions (F, B, W per microbatch and stage), "
                                 "over the limit of {:.0f} per schedule",
                                 source, devices, chunks, microbatches, actions, kMaxActions));
  }
}

void check_solver_work(const Problem& problem, double runs, std::string_view what) {
  const double stages = problem.stages();
  const double actions = stages * problem.microbatches * 3;
  if (actions * stages * runs > kMaxSolverWork) {
    throw InputError(fmt::format("{}: {:.0f} actions x {:.0f} stages x {:.0f} runs is over the search limit of {:.0f} "
                                 "(about 5 s; p=1000, m=1000 is one run's worth): use fewer devices or microbatches",
                                 what, actions, stages, runs, kMaxSolverWork));
  }
}

}  // namespace zb
