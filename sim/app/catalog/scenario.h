// Scenario files: a problem plus the schedules to run, given directly or through model presets.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/model_setup.h"
#include "models/static_memory.h"
#include "sim/core/problem_spec.h"

namespace zb {

// What a model-driven scenario's GPUs hold whatever the schedule (per pipeline device: one GPU of
// its tensor/data-parallel group), and the device they hold it on. A row's total per device is
// this plus its activation peak (GB).
struct ModelMemory {
  double device_GB = 0;
  double reserved_GB = 0;
  std::vector<models::StaticMemory> static_per_device;
};

// A scenario file: {"name", "description", "problem": {...}, "schedules": [...]}, or a
// model-driven one where "model", "hardware", "cluster", "microbatch_size", ... (models/) derive
// the costs and "problem" gives p, m and whatever should override the derived values. The model
// is read once, with its presets, when the scenario is; every later use takes this value.
struct Scenario {
  std::string source;  // file path, or "command line"
  std::string name;
  std::string description;
  ProblemSpec spec;
  std::vector<std::string> schedules;
  // Model-driven scenarios: the model setup (none for a direct problem), and the problem fields
  // given explicitly (file or flags), which win over the derived costs.
  std::optional<models::ModelSetup> model;
  std::set<std::string> explicit_fields;
  // Model-driven scenarios whose memory deltas are the model's (in GB): set by derive_model_costs.
  std::optional<ModelMemory> memory;
  // --offload-chunks (the file's "offload_chunks"): every generated schedule that does not offload
  // by itself gets the offload pass (sim/core/offload_pass.h) for its first min(K, chunks) chunks;
  // 0: none.
  int offload_chunks = 0;

  bool model_driven() const { return model.has_value(); }
};

Scenario load_scenario(const std::string& path);
// The same from a parsed object; base_dir anchors relative preset paths (the model's presets are
// read here).
Scenario scenario_from_json(const nlohmann::json& object, const std::string& source, const std::string& base_dir);
// Model-driven scenarios: (re)derives the costs of scenario.spec for its p, chunks and placement
// (sim/app/catalog/model_costs.h). A direct problem is left alone.
void derive_model_costs(Scenario& scenario);

// The cluster file a model-driven scenario names (for --engine simgrid), or "" when it has none.
std::string scenario_cluster_file(const Scenario& scenario);

}  // namespace zb
