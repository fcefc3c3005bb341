// Scenario files: a direct problem, or a model, hardware and cluster the cost model turns into one.
#include "sim/app/catalog/scenario.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/app/catalog/model_costs.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/support/json_text.h"
#include "sim/app/catalog/preset_files.h"

namespace zb {

Scenario load_scenario(const std::string& path) {
  const std::string text = read_file(path);
  const nlohmann::json object = parse_json(text, path);
  Scenario scenario = scenario_from_json(object, path, std::filesystem::path(path).parent_path().string());
  derive_model_costs(scenario);
  return scenario;
}

namespace {

bool is_model_key(std::string_view key) { return models::is_model_field(key); }

}  // namespace

Scenario scenario_from_json(const nlohmann::json& object, const std::string& path, const std::string& base_dir) {
  if (!object.is_object()) throw InputError(fmt::format("{}: a scenario must be a JSON object", path));
  Scenario scenario;
  scenario.source = path;
  nlohmann::json model = nlohmann::json::object();
  for (const auto& [key, value] : object.items()) {
    if (is_model_key(key)) model[key] = value;
  }
  const bool model_driven = model.contains("model");
  if (!model_driven && !model.empty() && !(model.size() == 1 && model.contains("cluster"))) {
    throw InputError(fmt::format("{}: field '{}' describes a model: it needs a field 'model' too", path,
                                 model.begin().key()));
  }
  bool has_problem = false;
  for (const auto& [key, value] : object.items()) {
    if (key == "name" || key == "description") {
      if (!value.is_string()) throw InputError(fmt::format("{}: field '{}' must be a string", path, key));
      (key == "name" ? scenario.name : scenario.description) = value.get<std::string>();
    } else if (key == "problem") {
      nlohmann::json problem = value;
      // "auto" (the limit from device memory) is the default of model-driven scenarios.
      if (model_driven && problem.is_object() && problem.contains("mem_limit") && problem["mem_limit"] == "auto") {
        problem.erase("mem_limit");
      }
      scenario.spec = problem_spec_from_json(problem, fmt::format("{}: problem", path));
      for (const auto& item : problem.items()) scenario.explicit_fields.insert(item.key());
      has_problem = true;
    } else if (key == "schedules") {
      if (!value.is_array()) throw InputError(fmt::format("{}: field 'schedules' must be an array of names", path));
      for (const auto& item : value) {
        if (!item.is_string()) {
          throw InputError(fmt::format("{}: field 'schedules' has {}: expected schedule names", path, item.dump()));
        }
        scenario.schedules.push_back(item.get<std::string>());
      }
    } else if (key == "offload_chunks") {
      if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > 1024) {
        throw InputError(fmt::format("{}: field 'offload_chunks' is {}: expected a whole number 0..1024 (chunks per "
                                     "device to offload)",
                                     path, value.dump()));
      }
      scenario.offload_chunks = value.get<int>();
    } else if (key == "calibration") {
      // zbexec calibrate's record of its noise (spread, outliers): the costs are in "problem".
      if (!value.is_object()) throw InputError(fmt::format("{}: field 'calibration' must be an object", path));
    } else if (!is_model_key(key)) {
      std::string model_fields;
      for (const auto field : models::kModelFields) model_fields += fmt::format(", {}", field);
      throw InputError(fmt::format("{}: unknown field '{}' (known: name, description, problem, schedules, offload_chunks, calibration, and for "
                                   "model-driven scenarios{})",
                                   path, key, model_fields.substr(1)));
    }
  }
  if (!has_problem && !model_driven) throw InputError(fmt::format("{}: missing field 'problem'", path));
  if (model_driven) scenario.model = models::model_setup_from_json(model, path, base_dir, catalog::read_preset_file);
  return scenario;
}

void derive_model_costs(Scenario& scenario) {
  if (!scenario.model_driven()) return;
  const models::ModelSetup& setup = *scenario.model;
  const models::StageCosts costs =
      catalog::apply_model_costs(setup, scenario.spec, scenario.explicit_fields, scenario.source);
  scenario.memory.reset();
  const auto& given = scenario.explicit_fields;
  if (!given.contains("mem_f") && !given.contains("mem_b") && !given.contains("mem_w")) {
    scenario.memory = ModelMemory{setup.hardware.memory_GB, setup.hardware.reserved_GB, costs.static_memory};
  }
}

std::string scenario_cluster_file(const Scenario& scenario) {
  if (!scenario.model_driven()) return "";
  return scenario.model->cluster_path.string();
}

}  // namespace zb
