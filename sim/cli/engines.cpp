// Dispatch to the evaluator or the SimGrid engine.
#include "engines.h"

#include <fmt/format.h>

#include "error.h"
#include "evaluator.h"

namespace zb::cli {

void check_engine_options(const EngineOptions& options) {
  if (options.engine == "eval") {
    if (!options.cluster.empty()) throw InputError("--cluster applies to --engine simgrid only");
    return;
  }
  if (options.engine == "simgrid") {
#ifdef ZB_HAVE_SIMGRID
    return;
#else
    throw InputError("--engine simgrid: this zbsim was built without SimGrid (install libsimgrid-dev and rebuild)");
#endif
  }
  throw InputError(fmt::format("--engine: unknown engine '{}' (expected eval or simgrid)", options.engine));
}

EngineRun run_engine(const Problem& problem, const Schedule& schedule, const EngineOptions& options) {
  check_engine_options(options);
  EngineRun run;
  if (options.engine == "eval") {
    run.trace = evaluate(problem, schedule);
  }
  return run;
}

}  // namespace zb::cli
