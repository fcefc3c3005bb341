// A measured row as a model-driven scenario (the fields of docs/design.md section 19), or every
// reason it cannot be one yet. Each value the row's columns do not give is an assumption, named.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/app/validate/measured_csv.h"
#include "sim/app/validate/row_model.h"

namespace zb::validate {

struct RowScenario {
  RowModel model;
  std::optional<nlohmann::json> scenario;  // when the row is covered
  std::string schedule;                    // the zbsim generator that runs the row's schedule
  std::string hardware;                    // the GPU's preset name
  nlohmann::json hardware_object;          // that preset (calibration overrides its efficiencies)
  std::string architecture;                // the GPU's generation
  std::vector<std::string> assumptions;
  std::vector<std::string> uncovered;      // every reason, empty when covered
};

RowScenario row_scenario(const MeasuredRow& row, std::string_view file);

}  // namespace zb::validate
