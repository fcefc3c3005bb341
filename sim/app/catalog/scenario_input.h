// The problem a front end runs: a scenario (a file, an object, or none) with problem fields given
// on top. zbsim's flags and the Python module's keyword arguments both arrive as GivenFields, so
// they are read, checked and worded the same way.
#pragma once

#include <vector>

#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/given_field.h"

namespace zb::catalog {

// Applies `given` over the scenario's problem (given fields win and become explicit), then
// derives a model-driven scenario's costs. "mem_limit" "auto" asks for the limit from device
// memory: model-driven scenarios only (InputError otherwise).
Scenario apply_given_fields(Scenario scenario, const std::vector<GivenField>& given);

// Costs left unset become 1, for commands where only the order matters (export).
void default_unit_costs(ProblemSpec& spec);

}  // namespace zb::catalog
