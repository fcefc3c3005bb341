// One schedule on one problem through an engine.
#include "sim/app/catalog/single_run.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/schedule_files.h"
#include "sim/app/catalog/detail/throughput_extras.h"
#include "sim/support/error.h"

namespace zb::catalog {

void describe_problem(Trace& trace, const ProblemSpec& spec, const Scenario& scenario) {
  trace.meta.problem_json = to_json(spec).dump();
  if (scenario.model_driven()) trace.meta.memory_unit = "GB";  // the cost model's memory (models/README.md)
}

std::string chosen_schedule(const Scenario& scenario, const std::optional<std::string>& name) {
  if (name) return *name;
  return scenario.schedules.empty() ? "zb-h1" : scenario.schedules.front();
}

std::string schedule_option_help() {
  return "schedule name (default: the scenario's first, or zb-h1): " + generator_list();
}

SingleRun run_single(Scenario scenario, const std::optional<std::string>& name,
                     const std::optional<GivenSchedule>& given, EngineOptions engine) {
  if (engine.engine == "simgrid" && engine.cluster.empty()) engine.cluster = scenario_cluster_file(scenario);
  check_engine_options(engine);
  SingleRun run;
  if (given) {
    apply_schedule_shape(given->schedule, scenario.spec, given->source);
    const Problem problem = scenario.spec.build(scenario.source);
    run.row = run_schedule_row(given->schedule, problem, engine, &run.trace);
    add_throughput_extras(scenario, problem, run.row);
    run.spec = scenario.spec.with_chunks(run.row.chunks);
  } else {
    scenario.spec.build(scenario.source);
    const std::string chosen = chosen_schedule(scenario, name);
    run.row = run_generator_row(chosen, scenario, engine, &run.trace);
    if (!run.row.has_metrics) throw InputError(fmt::format("{}: {}", chosen, run.row.reason));
    std::string reason;  // the row ran, so the generator's spec exists
    run.spec = *spec_for_generator(scenario, generators().get(chosen), reason);
  }
  describe_problem(run.trace, run.spec, scenario);
  return run;
}

}  // namespace zb::catalog
