// The JSON form of result rows (docs/design.md section 8): what `zbsim compare/simulate/solve
// --format json` print and what the Python module returns, from one function so the keys agree.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "sim/catalog/run_row.h"
#include "sim/schedule/problem_spec.h"

namespace zb::catalog {

// {"schedule", "status", "chunks", the metrics when the row ran, the extras, "reason" when set}.
nlohmann::json to_json(const ResultRow& row);

// {"problem": {...the spec...}, "results": [one object per row]}.
nlohmann::json results_json(const ProblemSpec& spec, const std::vector<ResultRow>& rows);

}  // namespace zb::catalog
