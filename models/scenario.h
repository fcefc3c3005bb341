// Scenario files: a problem plus the schedules to run, given directly or through model presets.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
// the costs and "problem" gives p, m and whatever should override the derived values.
struct Scenario {
  std::string source;  // file path, or "command line"
  std::string name;
  std::string description;
  ProblemSpec spec;
  std::vector<std::string> schedules;
  // Model-driven scenarios: the model-level fields as JSON text (empty for a direct problem), the
  // folder their relative paths start from, and the problem fields given explicitly (file or
  // flags), which win over the derived costs.
  std::string model_json;
  std::string base_dir;
  std::set<std::string> explicit_fields;
  // Model-driven scenarios whose memory deltas are the model's (in GB): set by derive_model_costs.
  std::optional<ModelMemory> memory;

  bool model_driven() const;
};

Scenario load_scenario(const std::string& path);
// The same from a parsed object; base_dir anchors relative preset paths.
Scenario scenario_from_json(const nlohmann::json& object, const std::string& source, const std::string& base_dir);
// Model-driven scenarios: (re)derives the costs of scenario.spec for its p, chunks and placement.
// A direct problem is left alone.
void derive_model_costs(Scenario& scenario);

// The cluster file a model-driven scenario names (for --engine simgrid), or "" when it has none.
std::string scenario_cluster_file(const Scenario& scenario);

}  // namespace zb
