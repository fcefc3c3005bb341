// One schedule from name to result row: chunks, generation, validation, memory check, engine.
#include "sim/catalog/run_row.h"

#include <fmt/format.h>

#include "sim/catalog/generators.h"
#include "sim/schedule/error.h"
#include "sim/schedule/memory.h"
#include "sim/schedule/validator.h"

namespace zb::catalog {

std::optional<ProblemSpec> spec_at_chunks(const ProblemSpec& spec, int chunks, std::string& reason) {
  if (chunks == spec.chunks) return spec;
  if (!spec.chunk_independent()) {
    reason = fmt::format("needs chunks={}, but the costs are given per stage for chunks={}", chunks, spec.chunks);
    return std::nullopt;
  }
  return spec.with_chunks(chunks);
}

std::optional<ProblemSpec> spec_for_generator(const ProblemSpec& spec, const GeneratorInfo& info, std::string& reason) {
  int chunks = spec.chunks;
  if (info.chunks == ChunkSupport::single) chunks = 1;
  if (info.chunks == ChunkSupport::multi && chunks < 2) chunks = 2;
  std::optional<ProblemSpec> adjusted = spec_at_chunks(spec, chunks, reason);
  // A generator made for one placement (the V schedules) gets it unless the user chose another
  // (then the generator says why it cannot run).
  if (adjusted && info.placement && (!spec.placement || chunks != spec.chunks)) adjusted->placement = info.placement;
  return adjusted;
}

NamedSchedule generate_named(const std::string& name, const ProblemSpec& spec, std::string_view source) {
  std::string reason;
  const auto adjusted = spec_for_generator(spec, generators().get(name), reason);
  if (!adjusted) throw InputError(fmt::format("{}: {}", name, reason));
  NamedSchedule named{adjusted->build(source), {}};
  named.schedule = generate(generators(), name, named.problem);
  return named;
}

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
  // Static memory beyond activations: a placement with two model copies doubles the parameters,
  // their gradients and optimizer state (docs/design.md section 16).
  if (problem.parameter_copies() > 1) row.extras.emplace_back("parameter_copies", problem.parameter_copies());
  if (const auto over = first_over_limit(problem, row.metrics.peak_memory)) {
    row.status = "over-limit";
    row.reason = over->reason();
  }
  if (trace) *trace = std::move(run.trace);
  return row;
}

ResultRow run_generator_row(const std::string& name, const ProblemSpec& spec, const EngineOptions& engine,
                            Trace* trace) {
  const GeneratorInfo& info = generators().get(name);
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
    schedule = generate(generators(), name, problem);
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

}  // namespace zb::catalog
