// One measured row through the model: its scenario and target prepared once, then predicted as
// often as a calibration needs, each time with the efficiencies it tries.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/hardware.h"
#include "sim/app/validate/measured_csv.h"
#include "sim/app/validate/validation.h"

namespace zb::validate {

struct PreparedRow {
  RowResult result;                        // everything but the prediction
  std::optional<nlohmann::json> scenario;  // when the row can be described
  nlohmann::json hardware_object;          // the GPU's preset
  std::string hardware;                    // the GPU's preset name ("" when it has none)
  std::string architecture;                // its generation ("" when the GPU has no preset)
  int seq_len = 0;
};

PreparedRow prepare_row(const MeasuredRow& row, const std::string& file);

// How a prediction runs: the engine, the cost model, efficiencies tried by a calibration (over
// the preset's), and for SimGrid the folder its per-row cluster files go in.
struct PredictionSettings {
  std::string engine = "eval";
  models::CostModel cost_model = models::CostModel::calibrated;
  std::optional<models::Efficiencies> efficiencies;
  std::string cluster_folder;  // engine simgrid only
};

// The row's result with its prediction, or with the reason zbsim could not make one.
RowResult predict_row(const PreparedRow& row, const PredictionSettings& settings);

}  // namespace zb::validate
