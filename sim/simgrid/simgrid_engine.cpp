// The parent side of the SimGrid engine: checks, the plan, the forked simulation in the SimGrid module, metrics.
#include "sim/simgrid/simgrid_engine.h"

#include <fmt/format.h>

#include "sim/simgrid/detail/engine_plan.h"
#include "sim/support/error.h"
#include "sim/core/pass_time.h"
#include "sim/simgrid/detail/fork_runner.h"
#include "sim/simgrid/detail/result_codec.h"
#include "sim/simgrid/detail/simgrid_module.h"

namespace zb {

SimgridResult run_simgrid(const Problem& problem, const Schedule& schedule, const SimgridOptions& options) {
  problem.validate();
  if (options.cluster) {
    options.cluster->validate(options.cluster->label(), problem.devices);
  }
  if (options.steps < 1) throw InputError(fmt::format("SimGrid engine: steps is {}: need at least 1", options.steps));
  const engine::EnginePlan plan = engine::make_engine_plan(problem, schedule);
  // Loaded here, before the fork, once per process: every child inherits it.
  const auto& module = reinterpret_cast<const engine::SimgridModule&>(
      load_module("SimGrid engine", engine::kSimgridModuleFile, engine::kSimgridModuleName));
  const std::string bytes =
      engine::run_record_in_child([&] { return module.simulate(problem, schedule, plan, options); }, !options.verbose);
  SimgridResult result = engine::decode_result(bytes);
  result.trace.metrics = compute_metrics(result.trace, compute_work(problem, schedule));
  return result;
}

Trace simulate_simgrid(const Problem& problem, const Schedule& schedule, const SimgridOptions& options) {
  return run_simgrid(problem, schedule, options).trace;
}

}  // namespace zb
