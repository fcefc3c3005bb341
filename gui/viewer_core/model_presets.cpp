// Model-driven costs in the explorer (see model_presets.h).
#include "gui/viewer_core/model_presets.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/support/error.h"

#include "models/model_setup.h"
#include "models/presets.h"
#include "sim/app/catalog/model_costs.h"
#include "sim/app/catalog/preset_files.h"

namespace zb::view {

std::vector<std::string> model_preset_names(std::string_view kind) {
  return models::preset_names(kind);
}

bool is_model_driven(const nlohmann::json& scenario) { return scenario.is_object() && scenario.contains("model"); }

ProblemSpec derive_scenario_costs(const nlohmann::json& scenario, const ProblemSpec& problem,
                                  const std::set<std::string>& explicit_fields, std::string_view source,
                                  const std::string& base_dir) {
  nlohmann::json model = nlohmann::json::object();
  for (const auto& [key, value] : scenario.items()) {
    if (models::is_model_field(key)) model[key] = value;
  }
  const auto setup = models::model_setup_from_json(model, source, base_dir, catalog::read_preset_file);
  ProblemSpec spec = problem;
  catalog::apply_model_costs(setup, spec, explicit_fields, source);
  return spec;
}

ProblemSpec derive_model_costs(const ProblemSpec& spec, const ModelChoice& choice,
                               const std::set<std::string>& explicit_fields) {
  const nlohmann::json scenario = {
      {"model", choice.model}, {"hardware", choice.hardware}, {"microbatch_size", choice.microbatch_size}};
  const std::string source = fmt::format("model {} on {}, microbatch size {}", choice.model, choice.hardware,
                                         choice.microbatch_size);
  return derive_scenario_costs(scenario, spec, explicit_fields, source, ".");
}

}  // namespace zb::view
