// One schedule from name to result row: the problem a generator runs on, generation, validation,
// the engine, the memory judgement. Shared by every front end that compares schedules (zbsim
// compare, simulate, solve, sweeps).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/engines.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"

namespace zb::catalog {

// ok: ran; over-limit: ran but its peak memory exceeds the limit; unsupported: the generator
// cannot build this shape; infeasible: no schedule fits the limit.
struct ResultRow {
  std::string schedule;
  std::string status = "ok";
  std::string reason;
  int chunks = 1;
  bool has_metrics = false;
  Metrics metrics;
  std::vector<std::pair<std::string, double>> extras;  // engine-specific numbers (e.g. step times)
  // Model-driven rows that ran: static memory plus activation peak per device (GB), for the row's
  // own shape (throughput_extras.h).
  std::vector<double> memory_per_device_GB;
};

// The engine-specific number `key` of a row (its extras: step times, throughput, memory), or none.
std::optional<double> row_extra(const ResultRow& row, std::string_view key);

// `spec` rebuilt for `chunks` chunks per device (per-device costs split anew), or nullopt with
// `reason` when its costs were given per stage for another chunk count.
std::optional<ProblemSpec> spec_at_chunks(const ProblemSpec& spec, int chunks, std::string& reason);

// The problem a generator runs on. Generators fix their chunk count (single: 1; multi: the given
// v, or 2) and, when they are made for one (the V schedules), their placement; when the costs were
// given per stage the problem cannot be rebuilt for another v, and `reason` says so (returns
// nullopt).
std::optional<ProblemSpec> spec_for_generator(const ProblemSpec& spec, const GeneratorInfo& info, std::string& reason);
// `spec` at the chunk count and placement generator `info` runs at, its costs not yet rebuilt.
ProblemSpec spec_shaped_for_generator(const ProblemSpec& spec, const GeneratorInfo& info);
// The same for a scenario: a model-driven one at another chunk count or placement gets its costs
// derived again for that shape (every stage's layers, embedding and output layer, and each
// boundary's link from the cluster), not the per-device costs split; a shape the model cannot
// take (more stages than layers) gives nullopt and `reason`. A "balanced" split is first chosen
// for the generator (balanced_split.h; nullopt and `reason` when no split fits).
std::optional<ProblemSpec> spec_for_generator(const Scenario& scenario, const GeneratorInfo& info, std::string& reason);

// The schedule generator `name` makes for the scenario, at the chunk count and placement it runs at
// (spec_for_generator), with the problem it was made for. Unlike a row, a shape the generator
// cannot build is an InputError naming it (zbsim export, the Python module's schedule()).
// `schedule` with the scenario's --offload-chunks pass, unless it offloads by itself.
Schedule with_scenario_offload(const Scenario& scenario, const Problem& problem, Schedule schedule);

struct NamedSchedule {
  Problem problem;
  Schedule schedule;
};
NamedSchedule generate_named(const std::string& name, const Scenario& scenario);

// The row for one generator; `trace` receives the trace when the row has metrics. Problems the
// generator cannot handle become a row with a status, never an exception; an unknown name is an
// InputError. Costs come from spec_for_generator on the scenario; a model-driven row also carries its
// throughput figures (throughput_extras.h).
ResultRow run_generator_row(const std::string& name, const Scenario& scenario, const EngineOptions& engine,
                            Trace* trace);

// The row for a given schedule (validated first: an invalid schedule is an InputError).
ResultRow run_schedule_row(const Schedule& schedule, const Problem& problem, const EngineOptions& engine,
                           Trace* trace);

}  // namespace zb::catalog
