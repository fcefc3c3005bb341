// Several schedules on one problem, side by side: what `zbsim compare` and the Python module's
// compare() run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/run_row.h"
#include "sim/core/trace.h"

namespace zb::catalog {

struct Comparison {
  std::vector<ResultRow> rows;  // one per schedule, in the order asked
  std::vector<Trace> traces;    // traces[i]: row i's trace (empty when the row did not run)
};

// Runs `chosen` (else the scenario's schedules, else every generator) on `engine` (the evaluator
// by default; its steps and optimizer step). The problem is built and every name looked up
// before any work: a bad problem or an unknown name is an InputError (naming the scenario's
// field when the name came from the file).
Comparison compare_schedules(const Scenario& scenario, const std::optional<std::vector<std::string>>& chosen,
                             const EngineOptions& engine = {});

}  // namespace zb::catalog
