// The table/JSON/CSV forms zbsim prints of result rows (catalog/run_row.h).
#pragma once

#include <string>
#include <vector>

#include "sim/catalog/run_row.h"
#include "sim/schedule/problem_spec.h"

namespace zb::cli {

enum class Format { table, json, csv };
Format parse_format(const std::string& text);

// JSON is catalog::results_json (sim/catalog/result_json.h), shared with the Python module.
std::string results_text(const ProblemSpec& spec, const std::vector<catalog::ResultRow>& rows, Format format);

}  // namespace zb::cli
