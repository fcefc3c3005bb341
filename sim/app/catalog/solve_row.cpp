// zb-ilp on one problem as a result row.
#include "sim/app/catalog/solve_row.h"

#include <fmt/format.h>

#include "sim/support/error.h"

namespace zb::catalog {

SolveRun solve_row(const Problem& problem, const IlpOptions& options, std::string_view limit_source) {
  if (options.node_limit < 1) throw InputError(fmt::format("--node-limit: {} (need at least 1 node)", options.node_limit));
  if (!(options.time_limit_s > 0)) {
    throw InputError(fmt::format("--time-limit: {} is not a positive number of seconds", options.time_limit_s));
  }
  if (options.threads < 1) throw InputError(fmt::format("--threads: {} (need at least 1)", options.threads));
  SolveRun run;
  run.result = solve_ilp(problem, options);
  const IlpResult& result = run.result;
  if (result.status == IlpStatus::infeasible) throw ScheduleError(fmt::format("{}: {}", limit_source, result.message));
  run.row = run_schedule_row(result.schedule, problem, EngineOptions{}, &run.trace);
  run.row.schedule = "zb-ilp";
  run.row.status = std::string(ilp_status_name(result.status));
  run.row.extras = {{"best_bound", result.best_bound},
                    {"gap", result.gap},
                    {"solve_seconds", result.solve_seconds},
                    {"heuristic_span", result.heuristic_span},
                    {"memory_limit", result.memory_limit},
                    {"order_variables", static_cast<double>(result.order_variables)},
                    {"nodes", static_cast<double>(result.nodes)},
                    {"stopped_by_wall_clock", result.stopped_by_wall_clock ? 1.0 : 0.0},
                    {"decomposed", result.decomposed ? 1.0 : 0.0}};
  // JSON and CSV carry the certificate in the reason, before what limited the solve.
  run.row.reason = std::string(ilp_proof_text(result.proof));
  if (!result.message.empty()) run.row.reason += "; " + result.message;
  return run;
}

}  // namespace zb::catalog
