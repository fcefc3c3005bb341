// Numbers from a measured row's cells: empty is "not given"; anything else must parse.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/app/validate/measured_csv.h"

namespace zb::validate {

// "FILE:LINE (row ID)": how messages about a row start.
std::string row_label(const MeasuredRow& row, std::string_view file);

// The cell as a whole number / a finite number; none when empty. InputError naming the file, line,
// row id, column and value otherwise.
std::optional<int> whole_cell(const MeasuredRow& row, std::string_view column, std::string_view file);
std::optional<double> number_cell(const MeasuredRow& row, std::string_view column, std::string_view file);

bool contains(std::string_view text, std::string_view part);
bool contains_nocase(std::string_view text, std::string_view part);

}  // namespace zb::validate
