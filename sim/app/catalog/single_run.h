// One schedule on one problem through an engine: what `zbsim simulate` runs and the Python
// module's simulate() and evaluate().
#pragma once

#include <optional>
#include <string>

#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/run_row.h"
#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"

namespace zb::catalog {

// A schedule that did not come from a generator, with the file (or word) that names it in errors.
struct GivenSchedule {
  Schedule schedule;
  std::string source;
};

struct SingleRun {
  ProblemSpec spec;  // the problem as run: the schedule's shape and the generator's chunk count filled in
  ResultRow row;
  Trace trace;  // meta.problem_json holds `spec`
};

// What a trace needs to say about the problem it ran: `spec` as meta.problem_json, and the memory
// unit of a model-driven scenario (GB, the cost model's).
void describe_problem(Trace& trace, const ProblemSpec& spec, const Scenario& scenario);

// The schedule a one-schedule command runs: `name` if given, else the scenario's first schedule,
// else zb-h1; and the --schedule help that says so and lists the generators.
std::string chosen_schedule(const Scenario& scenario, const std::optional<std::string>& name);
std::string schedule_option_help();

// The engine is checked first; with simgrid and no cluster, a model-driven scenario's own cluster
// is used. A given schedule fills the shape the scenario leaves open (a conflict is an InputError
// naming both), then it is validated and run; otherwise generator `name` (default: the scenario's
// first schedule, else zb-h1) runs, and a shape it cannot build is an InputError naming it.
SingleRun run_single(Scenario scenario, const std::optional<std::string>& name,
                     const std::optional<GivenSchedule>& given, EngineOptions engine);

}  // namespace zb::catalog
