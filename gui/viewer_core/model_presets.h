// Model-driven costs in the explorer: a transformer and a hardware preset from models/ (and a
// microbatch size) give per-device t_f, t_b, t_w, t_comm, memory and the limit from device memory,
// re-derived whenever p, chunks or the placement change. Needs the models part (zb_models).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/problem_spec.h"

namespace zb::view {

struct ModelChoice {
  std::string model;     // a preset name under models/transformers
  std::string hardware;  // a preset name under models/hardware
  int microbatch_size = 1;
};

// Preset names of a kind ("transformers", "hardware"), sorted.
std::vector<std::string> model_preset_names(std::string_view kind);

// The spec with its costs, memory, bytes and limit derived from the choice for its p, chunks and
// placement; fields named in `explicit_fields` ("t_f", "mem_limit", ...) keep the spec's values.
// Throws InputError (the setup does not fit, a preset is missing) naming the model and hardware.
ProblemSpec derive_model_costs(const ProblemSpec& spec, const ModelChoice& choice,
                               const std::set<std::string>& explicit_fields);

// For scenario files: true when the object has a "model" field (a model-driven scenario).
bool is_model_driven(const nlohmann::json& scenario);

// A model-driven scenario's spec: its "problem" (whose fields win) plus the costs its model fields
// give; `base_dir` resolves relative preset paths. Throws InputError naming `source`.
ProblemSpec derive_scenario_costs(const nlohmann::json& scenario, const ProblemSpec& problem,
                                  const std::set<std::string>& explicit_fields, std::string_view source,
                                  const std::string& base_dir);

}  // namespace zb::view
