// Several schedules on one problem.
#include "sim/app/catalog/comparison.h"

#include <fmt/format.h>

#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/single_run.h"
#include "sim/support/error.h"

namespace zb::catalog {

Comparison compare_schedules(const Scenario& scenario, const std::optional<std::vector<std::string>>& chosen,
                             const EngineOptions& engine) {
  scenario.spec.build(scenario.source);  // bad problems fail here, before any output
  const std::vector<std::string> names = chosen                       ? *chosen
                                         : scenario.schedules.empty() ? generators().names()
                                                                      : scenario.schedules;
  for (const auto& name : names) {
    try {
      generators().get(name);  // unknown names fail before any work
    } catch (const InputError& e) {
      if (chosen || scenario.schedules.empty()) throw;
      throw InputError(fmt::format("{}: field 'schedules': {}", scenario.source, e.what()));
    }
  }
  Comparison comparison;
  comparison.traces.resize(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    comparison.rows.push_back(run_generator_row(names[i], scenario, engine, &comparison.traces[i]));
    // The problem as the generator ran it (its chunks and, for the V schedules, its placement).
    std::string reason;
    const std::optional<ProblemSpec> ran = spec_for_generator(scenario, generators().get(names[i]), reason);
    if (comparison.rows.back().has_metrics && ran) describe_problem(comparison.traces[i], *ran, scenario);
  }
  return comparison;
}

}  // namespace zb::catalog
