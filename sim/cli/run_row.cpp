// One schedule from name to result row: chunks, generation, validation, memory check, engine.
#include "run_row.h"

#include <fmt/format.h>

#include "error.h"
#include "registry.h"
#include "schedule_source.h"
#include "validator.h"

namespace zb::cli {

ResultRow run_schedule_row(const Schedule& schedule, const Problem& problem, const EngineOptions& engine,
                           Trace* trace) {
  ResultRow row;
  row.schedule = schedule.name;
  row.chunks = problem.chunks;
  // Structure and deadlocks first (an error), then memory against the limit (a status).
  validate(problem, schedule, MemoryCheck::skip);
  EngineRun run = run_engine(problem, schedule, engine);
  row.has_metrics = true;
  row.metrics = run.trace.metrics;
  row.extras = std::move(run.extras);
  if (const auto limit = problem.memory_limit()) {
    for (int d = 0; d < problem.devices; ++d) {
      if (row.metrics.peak_memory[d] > *limit * (1 + 1e-9)) {
        row.status = "over-limit";
        row.reason = fmt::format("d{} peaks at {:g} > limit {:g}", d, row.metrics.peak_memory[d], *limit);
        break;
      }
    }
  }
  if (trace) *trace = std::move(run.trace);
  return row;
}

ResultRow run_generator_row(const std::string& name, const ProblemSpec& spec, const EngineOptions& engine,
                            Trace* trace) {
  const GeneratorInfo& info = cli_registry().get(name);
  ResultRow row;
  row.schedule = name;
  row.chunks = spec.chunks;
  std::string reason;
  const auto adjusted = spec_for_generator(spec, info, reason);
  if (!adjusted) {
    row.status = "unsupported";
    row.reason = reason;
    return row;
  }
  row.chunks = adjusted->chunks;
  const Problem problem = adjusted->build();
  Schedule schedule;
  try {
    schedule = generate(cli_registry(), name, problem);
  } catch (const ScheduleError& e) {
    row.status = "infeasible";
    row.reason = e.what();
    return row;
  } catch (const InputError& e) {
    row.status = "unsupported";
    row.reason = e.what();
    return row;
  }
  return run_schedule_row(schedule, problem, engine, trace);
}

}  // namespace zb::cli
