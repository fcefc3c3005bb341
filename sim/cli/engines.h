// The engines a schedule can run on: the evaluator always, SimGrid when it is built.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "problem.h"
#include "schedule.h"
#include "trace.h"

namespace zb::cli {

struct EngineOptions {
  std::string engine = "eval";  // eval | simgrid
  std::string cluster;          // simgrid: a cluster JSON file, or "ideal"
  double optimizer_step_time = 0;  // simgrid: the optimizer step per device, in the problem's time unit
  bool verbose = false;
};

struct EngineRun {
  Trace trace;
  std::vector<std::pair<std::string, double>> extras;  // engine-specific results, e.g. step times
};

// Checks the engine name and its options before anything runs (InputError on a bad choice).
void check_engine_options(const EngineOptions& options);

// Runs a validated schedule.
EngineRun run_engine(const Problem& problem, const Schedule& schedule, const EngineOptions& options);

}  // namespace zb::cli
