// The parent side of the SimGrid engine: checks, the forked simulation, metrics.
#include "simgrid_engine.h"

#include <fmt/format.h>

#include "engine_plan.h"
#include "error.h"
#include "fork_runner.h"
#include "result_codec.h"
#include "simulation.h"
#include "validator.h"

namespace zb {

namespace {

// An over-limit schedule is reported, not run. Memory changes only at a device's own actions,
// which run in list order, so the order-based peak is the timed peak.
void check_memory_limit(const Problem& problem, const Schedule& schedule) {
  const auto limit = problem.memory_limit();
  if (!limit) return;
  const std::vector<double> peaks = peak_memory_by_order(problem, schedule);
  for (std::size_t d = 0; d < peaks.size(); ++d) {
    if (peaks[d] > *limit * (1 + 1e-9)) {
      throw ScheduleError(fmt::format("schedule '{}': d{}: peak activation memory {:g} exceeds the limit {:g} ({})",
                                      schedule.name, d, peaks[d], *limit, problem.mem_limit->to_string()));
    }
  }
}

}  // namespace

SimgridResult run_simgrid(const Problem& problem, const Schedule& schedule, const SimgridOptions& options) {
  problem.validate();
  if (options.cluster) {
    options.cluster->validate(options.cluster->label(), problem.devices);
  }
  if (!(options.optimizer_step_time >= 0)) {
    throw InputError(fmt::format("SimGrid engine: optimizer step time {} must be >= 0", options.optimizer_step_time));
  }
  const engine::EnginePlan plan = engine::make_engine_plan(problem, schedule);
  check_memory_limit(problem, schedule);
  const std::string bytes = engine::run_in_child(
      [&] { return engine::encode_result(engine::simulate_here(problem, schedule, plan, options)); },
      !options.verbose);
  SimgridResult result = engine::decode_result(bytes);
  result.trace.metrics = compute_metrics(result.trace, problem.work());
  return result;
}

Trace simulate_simgrid(const Problem& problem, const Schedule& schedule, const SimgridOptions& options) {
  return run_simgrid(problem, schedule, options).trace;
}

}  // namespace zb
