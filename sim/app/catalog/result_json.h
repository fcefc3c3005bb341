// The JSON form of result rows (docs/design.md section 8): what `zbsim compare/simulate/solve
// --format json` print and what the Python module returns, from one function so the keys agree.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/run_row.h"
#include "sim/core/problem_spec.h"

namespace zb::catalog {

// {"schedule", "status", "chunks", the metrics when the row ran, the extras, "reason" when set}.
nlohmann::json to_json(const ResultRow& row);

// {"problem": {...the spec...}, "results": [one object per row]}. With a model-driven scenario's
// memory: "memory": {"device_GB", "reserved_GB", "static_GB", "parameters_GB", "gradients_GB",
// "optimizer_GB", "gathered_GB"} (lists per device; the spec's shape) and, on each row that ran,
// "memory_per_device_GB": static + activation peak per device, for the row's own shape.
nlohmann::json results_json(const ProblemSpec& spec, const std::vector<ResultRow>& rows,
                            const ModelMemory* memory = nullptr);


}  // namespace zb::catalog
