// One schedule from name to result row: chunks, generation, validation, memory check, engine.
#include "sim/app/catalog/run_row.h"

#include <fmt/format.h>

#include "sim/app/catalog/balanced_split.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/detail/throughput_extras.h"
#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/core/offload_pass.h"
#include "sim/core/validator.h"

namespace zb::catalog {

std::optional<ProblemSpec> spec_at_chunks(const ProblemSpec& spec, int chunks, std::string& reason) {
  if (chunks == spec.chunks) return spec;
  if (!spec.chunk_independent()) {
    reason = fmt::format("needs chunks={}, but the costs are given per stage for chunks={}", chunks, spec.chunks);
    return std::nullopt;
  }
  return spec.with_chunks(chunks);
}

namespace {

int generator_chunks(const ProblemSpec& spec, const GeneratorInfo& info) {
  if (info.chunks == ChunkSupport::single) return 1;
  if (info.chunks == ChunkSupport::multi && spec.chunks < 2) return 2;
  return spec.chunks;
}

// A generator made for one placement (the V schedules) gets it unless the user chose another
// (then the generator says why it cannot run).
void give_generator_placement(const ProblemSpec& spec, const GeneratorInfo& info, int chunks, ProblemSpec& adjusted) {
  if (info.placement && (!spec.placement || chunks != spec.chunks)) adjusted.placement = info.placement;
}

}  // namespace

std::optional<ProblemSpec> spec_for_generator(const ProblemSpec& spec, const GeneratorInfo& info, std::string& reason) {
  const int chunks = generator_chunks(spec, info);
  std::optional<ProblemSpec> adjusted = spec_at_chunks(spec, chunks, reason);
  if (adjusted) give_generator_placement(spec, info, chunks, *adjusted);
  return adjusted;
}

ProblemSpec spec_shaped_for_generator(const ProblemSpec& spec, const GeneratorInfo& info) {
  const int chunks = generator_chunks(spec, info);
  ProblemSpec shaped = spec.with_chunks(chunks);
  give_generator_placement(spec, info, chunks, shaped);
  return shaped;
}

std::optional<ProblemSpec> spec_for_generator(const Scenario& scenario, const GeneratorInfo& info, std::string& reason) {
  const ProblemSpec& spec = scenario.spec;
  if (!scenario.model_driven()) return spec_for_generator(spec, info, reason);
  if (has_balanced_split(scenario)) {
    const std::optional<Scenario> chosen = resolve_balanced_split(scenario, info.name, reason);
    return chosen ? spec_for_generator(*chosen, info, reason) : std::nullopt;
  }
  const int chunks = generator_chunks(spec, info);
  Scenario shaped = scenario;
  shaped.spec = spec_shaped_for_generator(spec, info);
  if (shaped.spec.chunks == spec.chunks && shaped.spec.resolved_placement() == spec.resolved_placement()) return spec;
  try {
    derive_model_costs(shaped);
    shaped.spec.build(scenario.source);  // costs the user gave per stage for another shape fail here
  } catch (const InputError& e) {
    reason = fmt::format("needs chunks={} ({}): {}", chunks, placement_name(shaped.spec.resolved_placement()), e.what());
    return std::nullopt;
  }
  return shaped.spec;
}

Schedule with_scenario_offload(const Scenario& scenario, const Problem& problem, Schedule schedule) {
  if (scenario.offload_chunks == 0 || has_copies(schedule)) return schedule;
  return with_offload(problem, schedule, std::min(scenario.offload_chunks, problem.chunks), "--offload-chunks");
}

NamedSchedule generate_named(const std::string& name, const Scenario& scenario) {
  std::string reason;
  const auto adjusted = spec_for_generator(scenario, generators().get(name), reason);
  if (!adjusted) throw InputError(fmt::format("{}: {}", name, reason));
  NamedSchedule named{adjusted->build(scenario.source), {}};
  named.schedule = with_scenario_offload(scenario, named.problem, generate(generators(), name, named.problem));
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

namespace {

// The row of generator `name` on `adjusted` (its problem into `problem`), or of why there is none.
ResultRow run_adjusted_row(const std::string& name, const Scenario& scenario, const std::optional<ProblemSpec>& adjusted,
                           const std::string& reason, const EngineOptions& engine, Trace* trace, Problem& problem) {
  const int asked_chunks = scenario.spec.chunks;
  ResultRow row;
  row.schedule = name;
  row.chunks = asked_chunks;
  if (!adjusted) {
    row.status = "unsupported";
    row.reason = reason;
    return row;
  }
  row.chunks = adjusted->chunks;
  problem = adjusted->build();
  Schedule schedule;
  try {
    schedule = with_scenario_offload(scenario, problem, generate(generators(), name, problem));
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

}  // namespace

std::optional<double> row_extra(const ResultRow& row, std::string_view key) {
  for (const auto& [name, value] : row.extras) {
    if (name == key) return value;
  }
  return std::nullopt;
}

ResultRow run_generator_row(const std::string& name, const Scenario& scenario, const EngineOptions& engine,
                            Trace* trace) {
  std::string reason;
  // A balanced split is chosen once, and the throughput figures count the split that ran.
  std::optional<Scenario> resolved;
  if (has_balanced_split(scenario)) resolved = resolve_balanced_split(scenario, generators().get(name).name, reason);
  const Scenario& ran = resolved ? *resolved : scenario;
  std::optional<ProblemSpec> adjusted;
  if (!has_balanced_split(scenario) || resolved) adjusted = spec_for_generator(ran, generators().get(name), reason);
  Problem problem;
  ResultRow row = run_adjusted_row(name, ran, adjusted, reason, engine, trace, problem);
  add_throughput_extras(ran, problem, row);
  return row;
}

}  // namespace zb::catalog
