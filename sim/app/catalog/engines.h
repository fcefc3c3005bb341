// What a schedule can run on: the evaluator always, SimGrid when it is built. The one dispatcher
// zbsim, its sweeps and zbview use.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"

namespace zb::catalog {

struct EngineOptions {
  std::string engine = "eval";  // eval | simgrid
  std::string cluster;          // simgrid: a cluster JSON file, or "ideal" (also when empty)
  // Consecutive training steps, enough for the steady state (docs/design.md section 7): the
  // first starts every device at 0, the second at the skew the optimizer step leaves, and the
  // third repeats the second.
  int steps = 3;
  // Post-validation: the fraction of steps whose verdict disagrees, each costing a redo of the
  // update after the verdict (an expected cost, optimizer_step.h).
  double rollback_rate = 0;
  bool verbose = false;
};

struct EngineRun {
  Trace trace;  // `steps` steps, in the optimizer mode the schedule is normally run with
  // The steady-state step times: step_time (the normal mode), step_time_sync,
  // step_time_post_validation; then engine-specific numbers.
  std::vector<std::pair<std::string, double>> extras;
};

// The engines this build has: "eval", and "simgrid" when SimGrid was found at configure time.
std::vector<std::string> engine_names();
bool simgrid_available();

// Checks the engine name and its options before anything runs (InputError on a bad choice).
void check_engine_options(const EngineOptions& options);

// What a user should hear before trusting a run, or "": a SimGrid cluster whose links would
// carry 0-byte activations (no bytes_act), so transfers cost only latency and the run comes out
// faster than the evaluator's t_comm.
std::string engine_warning(const ProblemSpec& spec, const EngineOptions& options);

// Runs a validated schedule: once per optimizer mode (twice more for post-validation with a
// rollback rate). Engines never refuse an over-limit schedule: they report its peaks
// and the caller judges them (memory.h).
EngineRun run_engine(const Problem& problem, const Schedule& schedule, const EngineOptions& options);

}  // namespace zb::catalog
