// Model-driven costs in the explorer (see model_presets.h).
#include "timeline/model_presets.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "schedule/error.h"

#ifdef ZB_VIEW_WITH_MODELS
#include "cost_model.h"
#include "model_setup.h"
#include "presets.h"
#endif

namespace zb::view {

bool models_available() {
#ifdef ZB_VIEW_WITH_MODELS
  return true;
#else
  return false;
#endif
}

std::vector<std::string> model_preset_names(std::string_view kind) {
#ifdef ZB_VIEW_WITH_MODELS
  return models::preset_names(kind);
#else
  (void)kind;
  return {};
#endif
}

bool is_model_driven(const nlohmann::json& scenario) { return scenario.is_object() && scenario.contains("model"); }

ProblemSpec derive_scenario_costs(const nlohmann::json& scenario, const ProblemSpec& problem,
                                  const std::set<std::string>& explicit_fields, std::string_view source,
                                  const std::string& base_dir) {
#ifdef ZB_VIEW_WITH_MODELS
  nlohmann::json model = nlohmann::json::object();
  for (const auto& [key, value] : scenario.items()) {
    if (models::is_model_field(key)) model[key] = value;
  }
  const auto setup = models::model_setup_from_json(model, source, base_dir);
  ProblemSpec spec = problem;
  models::apply_model(setup, spec, explicit_fields, source);
  return spec;
#else
  (void)scenario, (void)problem, (void)explicit_fields, (void)base_dir;
  throw InputError(fmt::format("{}: a model-driven scenario needs zb_models (zbview was built without models/)", source));
#endif
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
