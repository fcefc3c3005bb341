// The table/JSON/CSV forms zbsim prints of result rows (catalog/run_row.h).
#pragma once

#include <string>
#include <vector>

#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/run_row.h"
#include "sim/core/problem_spec.h"

namespace zb::cli {

enum class Format { table, json, csv };
Format parse_format(const std::string& text);

// JSON is catalog::results_json (sim/app/catalog/result_json.h), shared with the Python module. With a
// model-driven scenario's memory, the table ends with static and total memory per device and CSV
// rows carry memory_per_device_GB (static + activation peak per device).
std::string results_text(const ProblemSpec& spec, const std::vector<catalog::ResultRow>& rows, Format format,
                         const ModelMemory* memory = nullptr);

}  // namespace zb::cli
