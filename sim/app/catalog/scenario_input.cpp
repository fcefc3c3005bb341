// A scenario with problem fields given on top.
#include "sim/app/catalog/scenario_input.h"

#include "sim/support/error.h"

namespace zb::catalog {

Scenario apply_given_fields(Scenario scenario, const std::vector<GivenField>& given) {
  bool limit_auto = false;
  for (const GivenField& field : given) limit_auto = limit_auto || (field.field->key == "mem_limit" && field.text == "auto");
  if (limit_auto) {
    // The limit from device memory: model-driven scenarios only.
    if (!scenario.model_driven()) {
      throw InputError("--mem-limit auto: needs a model-driven scenario (--scenario with a 'model' field)");
    }
    scenario.explicit_fields.erase("mem_limit");
  }
  for (const GivenField& field : given) {
    if (limit_auto && field.field->key == "mem_limit") continue;
    field.apply(scenario.spec);
    scenario.explicit_fields.emplace(field.field->key);
  }
  derive_model_costs(scenario);
  return scenario;
}

void default_unit_costs(ProblemSpec& spec) {
  for (auto* costs : {&spec.t_f, &spec.t_b, &spec.t_w}) {
    if (costs->empty()) *costs = {1.0};
  }
}

}  // namespace zb::catalog
