// A validation as a table for people, or as JSON or CSV (one line per row) for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/app/validate/validation.h"

namespace zb::validate {

// Summaries, rank groups, every row (measured, predicted, error), then the uncovered rows with
// their reasons and the assumptions made. Percentages of relative error; tokens/s per GPU.
std::string validation_table(const Validation& v);
nlohmann::json validation_json(const Validation& v);
// One line per row of the table, in file order (cells quoted per RFC 4180).
std::string validation_csv(const Validation& v);

// Whether the row's predicted memory exceeds what its GPU holds (the row ran, so the memory model
// is wrong there).
bool memory_model_disagrees(const RowResult& r);

}  // namespace zb::validate
