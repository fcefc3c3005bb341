// Dispatch to the evaluator or the SimGrid engine.
#include "sim/app/catalog/engines.h"

#include <fmt/format.h>

#include <functional>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/limits.h"
#include "sim/core/optimizer_step.h"
#if ZB_HAVE_SIMGRID
#include "sim/simgrid/cluster.h"
#include "sim/simgrid/simgrid_engine.h"
#endif

namespace zb::catalog {

bool simgrid_available() { return ZB_HAVE_SIMGRID != 0; }

std::vector<std::string> engine_names() {
  std::vector<std::string> names{"eval"};
  if (simgrid_available()) names.emplace_back("simgrid");
  return names;
}

// A trace holds every step: more steps than this is a typo, not a steady state.
constexpr int kMaxSteps = 1000;

void check_engine_options(const EngineOptions& options) {
  if (options.steps < 1 || options.steps > kMaxSteps) {
    throw InputError(fmt::format("--steps is {}: expected 1 to {}", options.steps, kMaxSteps));
  }
  if (!(options.rollback_rate >= 0 && options.rollback_rate <= 1)) {
    throw InputError(fmt::format("--rollback-rate is {}: expected a fraction in [0, 1]", options.rollback_rate));
  }
  if (options.engine == "eval") {
    if (!options.cluster.empty()) throw InputError("--cluster applies to --engine simgrid only");
    return;
  }
  if (options.engine == "simgrid") {
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

std::string engine_warning(const ProblemSpec& spec, const EngineOptions& options) {
  if (options.engine != "simgrid" || options.cluster.empty() || options.cluster == "ideal" || spec.bytes_act > 0) {
    return "";
  }
  return fmt::format("the cluster {} carries 0-byte activations (no --bytes-act and no model): its transfers cost "
                     "only link latency, faster than t_comm in the evaluator; give --bytes-act B (bytes per "
                     "microbatch per stage boundary) or a model-driven scenario",
                     options.cluster);
}

EngineRun run_engine(const Problem& problem, const Schedule& schedule, const EngineOptions& options) {
  check_engine_options(options);
  check_action_count(problem.devices, problem.chunks, static_cast<double>(problem.microbatches) * options.steps,
                     fmt::format("--steps {}", options.steps));
  // One run per optimizer mode; only the normal mode's trace is kept (the evaluator records no
  // spans for the others).
  const OptimizerMode normal = normal_optimizer_mode(schedule);
  std::function<Trace(OptimizerMode, bool)> simulate;
  if (options.engine == "eval") {
    simulate = [&](OptimizerMode mode, bool rollback) {
      EvalOptions eval;
      eval.steps = options.steps;
      eval.optimizer = {mode, rollback};
      eval.record_spans = eval.record_memory = mode == normal && !rollback;
      return evaluate(problem, schedule, eval);
    };
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
    simgrid.steps = options.steps;
    if (!options.cluster.empty() && options.cluster != "ideal") simgrid.cluster = load_cluster_file(options.cluster);
    simulate = [&problem, &schedule, simgrid](OptimizerMode mode, bool rollback) mutable {
      simgrid.optimizer = {mode, rollback};
      return run_simgrid(problem, schedule, simgrid).trace;
    };
  }
#endif
  Trace sync = simulate(OptimizerMode::sync, false);
  Trace post_validation = simulate(OptimizerMode::post_validation, false);
  const double sync_time = steady_step_time(sync.step_ends);
  double post_validation_time = steady_step_time(post_validation.step_ends);
  if (options.rollback_rate > 0) {
    const Trace every_rollback = simulate(OptimizerMode::post_validation, true);
    post_validation_time = expected_post_validation_time(post_validation_time, steady_step_time(every_rollback.step_ends),
                                                         options.rollback_rate);
  }
  EngineRun run;
  run.trace = std::move(normal == OptimizerMode::sync ? sync : post_validation);
  run.extras = {{"step_time", normal == OptimizerMode::sync ? sync_time : post_validation_time},
                {"step_time_sync", sync_time},
                {"step_time_post_validation", post_validation_time}};
  return run;
}

}  // namespace zb::catalog
