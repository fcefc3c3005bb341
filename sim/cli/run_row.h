// Generating, validating and running one named schedule into a result row.
#pragma once

#include <string>

#include "sim/catalog/engines.h"
#include "sim/schedule/problem_spec.h"
#include "sim/cli/results.h"

namespace zb::cli {

// The row for one generator; `trace` receives the trace when the row has metrics. Problems the
// generator cannot handle become a row with a status, never an exception; an unknown name is an
// InputError.
ResultRow run_generator_row(const std::string& name, const ProblemSpec& spec, const catalog::EngineOptions& engine,
                            Trace* trace);

// The row for a given schedule (validated first: an invalid schedule is an InputError).
ResultRow run_schedule_row(const Schedule& schedule, const Problem& problem, const catalog::EngineOptions& engine,
                           Trace* trace);

}  // namespace zb::cli
