// Dispatch to the evaluator or the SimGrid engine.
#include "sim/catalog/engines.h"

#include <fmt/format.h>

#include "sim/schedule/error.h"
#include "sim/schedule/evaluator.h"
#if ZB_HAVE_SIMGRID
#include "sim/engine/cluster.h"
#include "sim/engine/simgrid_engine.h"
#endif

namespace zb::catalog {

bool simgrid_available() { return ZB_HAVE_SIMGRID != 0; }

std::vector<std::string> engine_names() {
  std::vector<std::string> names{"eval"};
  if (simgrid_available()) names.emplace_back("simgrid");
  return names;
}

void check_engine_options(const EngineOptions& options) {
  if (options.engine == "eval") {
    if (!options.cluster.empty()) throw InputError("--cluster applies to --engine simgrid only");
    if (options.optimizer_step_time != 0) throw InputError("--optimizer-step-time applies to --engine simgrid only");
    return;
  }
  if (options.engine == "simgrid") {
    if (!(options.optimizer_step_time >= 0)) {
      throw InputError(fmt::format("--optimizer-step-time is {}: expected a time >= 0", options.optimizer_step_time));
    }
#if ZB_HAVE_SIMGRID
    // A bad cluster file is bad input: reject it before anything runs.
    if (!options.cluster.empty() && options.cluster != "ideal") load_cluster_file(options.cluster);
    return;
#else
    throw InputError("--engine simgrid: this build has no SimGrid (install libsimgrid-dev and rebuild)");
#endif
  }
  throw InputError(fmt::format("--engine: unknown engine '{}' (expected {})", options.engine,
                               simgrid_available() ? "eval or simgrid" : "eval; simgrid is not built"));
}

EngineRun run_engine(const Problem& problem, const Schedule& schedule, const EngineOptions& options) {
  check_engine_options(options);
  EngineRun run;
  if (options.engine == "eval") {
    run.trace = evaluate(problem, schedule);
  }
#if ZB_HAVE_SIMGRID
  if (options.engine == "simgrid") {
    // One actor per device and per channel, each with its own stack (1 MiB, simulation.cpp): 1024
    // devices is about 3 GiB of address space (p=2000, m=16 simulated in 3 s).
    constexpr int kMaxSimgridDevices = 1024;
    if (problem.devices > kMaxSimgridDevices) {
      throw InputError(fmt::format("--engine simgrid: p={} is over the limit of {} devices", problem.devices,
                                   kMaxSimgridDevices));
    }
    SimgridOptions simgrid;
    simgrid.verbose = options.verbose;
    simgrid.optimizer_step_time = options.optimizer_step_time;
    if (!options.cluster.empty() && options.cluster != "ideal") simgrid.cluster = load_cluster_file(options.cluster);
    SimgridResult result = run_simgrid(problem, schedule, simgrid);
    run.trace = std::move(result.trace);
    run.extras = {{"step_time_barrier", result.step.barrier},
                  {"step_time_post_validation", result.step.post_validation}};
  }
#endif
  return run;
}

}  // namespace zb::catalog
