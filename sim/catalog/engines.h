// What a schedule can run on: the evaluator always, SimGrid when it is built. The one dispatcher
// zbsim, its sweeps and zbview use.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"
#include "sim/schedule/trace.h"

namespace zb::catalog {

struct EngineOptions {
  std::string engine = "eval";     // eval | simgrid
  std::string cluster;             // simgrid: a cluster JSON file, or "ideal" (also when empty)
  double optimizer_step_time = 0;  // simgrid: the optimizer step per device, in the problem's time unit
  bool verbose = false;
};

struct EngineRun {
  Trace trace;
  std::vector<std::pair<std::string, double>> extras;  // engine-specific results, e.g. step times
};

// The engines this build has: "eval", and "simgrid" when SimGrid was found at configure time.
std::vector<std::string> engine_names();
bool simgrid_available();

// Checks the engine name and its options before anything runs (InputError on a bad choice).
void check_engine_options(const EngineOptions& options);

// Runs a validated schedule. Engines never refuse an over-limit schedule: they report its peaks
// and the caller judges them (memory.h).
EngineRun run_engine(const Problem& problem, const Schedule& schedule, const EngineOptions& options);

}  // namespace zb::catalog
