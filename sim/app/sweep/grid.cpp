// Reading sweep grids, expanding points, and checking every axis value before anything runs.
#include "sim/app/sweep/grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "sim/support/atomic_file.h"
#include "sim/app/catalog/engines.h"
#include "sim/support/error.h"
#include "sim/core/problem_fields.h"
#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/sweep/row.h"
#include "models/model_setup.h"
#include "models/setup_infeasible.h"
#include "sim/support/json_text.h"

namespace zb::sweep {

namespace {

// The model-level fields are the cost model's (models/model_setup.h), one list.
using models::kModelFields;

bool contains(auto&& list, std::string_view key) {
  return std::find(std::begin(list), std::end(list), key) != std::end(list);
}

std::string known_axes() {
  std::string text = "schedule, engine";
  for (const auto field : kModelFields) text += fmt::format(", {}", field);
  text += ", " + problem_field_keys();
  return text;
}

// Applies one axis value to a point.
void apply_axis(Point& point, const std::string& key, const nlohmann::json& value) {
  if (key == "schedule") {
    point.schedule = value.get<std::string>();
  } else if (key == "engine") {
    point.engine = value.get<std::string>();
  } else if (contains(kModelFields, key)) {
    point.scenario[key] = value;
  } else {
    point.scenario["problem"][key] = value;
  }
}

nlohmann::json read_json(const std::string& path) {
  return parse_json(read_file(path), path);
}

}  // namespace

long Grid::size() const {
  long total = 1;
  std::string product;
  bool too_many = false;
  for (const auto& axis : axes) {
    const long n = static_cast<long>(axis.values.size());
    product += fmt::format("{}{}", product.empty() ? "" : " x ", n);
    // Checked before multiplying: the product of many axes overflows a long long before it ends.
    too_many = too_many || (n > 0 && total > kMaxPoints / n);
    if (!too_many) total *= n;
  }
  if (too_many) throw InputError(fmt::format("{}: too many points: {} (more than {})", source, product, kMaxPoints));
  return total;
}

Point Grid::point(long index) const {
  Point point;
  point.index = index;
  point.of = size();
  point.scenario = base;
  point.scenario.erase("schedules");
  point.engine = engine;
  point.axes = nlohmann::ordered_json::object();
  long rest = index;
  std::vector<std::size_t> digits(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    digits[i] = static_cast<std::size_t>(rest % static_cast<long>(axes[i].values.size()));
    rest /= static_cast<long>(axes[i].values.size());
  }
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const nlohmann::json& value = axes[i].values[digits[i]];
    point.axes[axes[i].key] = value;
    apply_axis(point, axes[i].key, value);
  }
  return point;
}

std::vector<std::string> Grid::extra_columns() const {
  std::vector<std::string> extra;
  for (const auto& axis : axes) {
    if (!contains(input_columns(), axis.key)) extra.push_back(axis.key);
  }
  return extra;
}

Grid load_grid(const std::string& path) {
  return grid_from_json(parse_ordered_json(read_file(path), path), path, std::filesystem::path(path).parent_path().string());
}

Grid grid_from_json(const nlohmann::ordered_json& object, const std::string& path, const std::string& base_dir) {
  if (!object.is_object()) throw InputError(fmt::format("{}: a sweep grid must be a JSON object", path));
  Grid grid;
  grid.source = path;
  grid.base_dir = base_dir;
  nlohmann::json scenario_file = nlohmann::json::object();
  nlohmann::json inline_base = nlohmann::json::object();
  bool has_axes = false;
  for (const auto& [key, value] : object.items()) {
    if (key == "name" || key == "description") {
      if (!value.is_string()) throw InputError(fmt::format("{}: field '{}' must be a string", path, key));
      if (key == "name") grid.name = value.get<std::string>();
    } else if (key == "scenario") {
      if (!value.is_string()) {
        throw InputError(fmt::format("{}: field 'scenario' is {}: expected the path of a scenario file", path,
                                     value.dump()));
      }
      std::filesystem::path file(value.get<std::string>());
      if (file.is_relative()) file = std::filesystem::path(grid.base_dir) / file;
      scenario_file = read_json(file.string());
      if (!scenario_file.is_object()) throw InputError(fmt::format("{}: a scenario must be a JSON object", file.string()));
    } else if (key == "base") {
      if (!value.is_object()) {
        throw InputError(fmt::format("{}: field 'base' is {}: expected a scenario object", path, value.dump()));
      }
      inline_base = nlohmann::json(value);
    } else if (key == "engine") {
      if (!value.is_string()) throw InputError(fmt::format("{}: field 'engine' is {}: expected eval or simgrid", path, value.dump()));
      grid.engine = value.get<std::string>();
    } else if (key == "axes") {
      if (!value.is_object() || value.empty()) {
        throw InputError(fmt::format("{}: field 'axes' is {}: expected an object of axis -> list of values, e.g. "
                                     "{{\"m\": [8, 16, 32], \"schedule\": [\"1f1b\", \"zb-h1\"]}}",
                                     path, value.dump()));
      }
      has_axes = true;
      for (const auto& [axis_key, values] : value.items()) {
        if (axis_key != "schedule" && axis_key != "engine" && !contains(kModelFields, axis_key) &&
            !find_problem_field(axis_key)) {
          throw InputError(fmt::format("{}: axis '{}' is not a scenario field (known: {})", path, axis_key, known_axes()));
        }
        if (!values.is_array() || values.empty()) {
          throw InputError(fmt::format("{}: axis '{}' is {}: expected a non-empty list of values", path, axis_key,
                                       values.dump()));
        }
        Axis axis{axis_key, {}};
        for (const auto& item : values) {
          if ((axis_key == "schedule" || axis_key == "engine") && !item.is_string()) {
            throw InputError(fmt::format("{}: axis '{}' has {}: expected a name", path, axis_key, item.dump()));
          }
          axis.values.push_back(nlohmann::json(item));
        }
        grid.axes.push_back(std::move(axis));
      }
    } else {
      throw InputError(fmt::format("{}: unknown field '{}' (known: name, description, scenario, base, engine, axes)",
                                   path, key));
    }
  }
  if (!has_axes) throw InputError(fmt::format("{}: missing field 'axes'", path));
  // The scenario file, then the inline base on top ("problem" merged field by field).
  grid.base = scenario_file;
  for (const auto& [key, value] : inline_base.items()) {
    if (key == "problem" && value.is_object() && grid.base.contains("problem") && grid.base["problem"].is_object()) {
      for (const auto& [field, v] : value.items()) grid.base["problem"][field] = v;
    } else {
      grid.base[key] = value;
    }
  }
  const bool has_schedule_axis =
      std::any_of(grid.axes.begin(), grid.axes.end(), [](const Axis& a) { return a.key == "schedule"; });
  if (!has_schedule_axis) {
    const auto it = grid.base.find("schedules");
    if (it == grid.base.end() || !it->is_array() || it->empty()) {
      throw InputError(fmt::format("{}: no schedules: add an axis 'schedule' (e.g. \"schedule\": [\"1f1b\", "
                                   "\"zb-h1\"]) or a list 'schedules' to the base scenario",
                                   path));
    }
    Axis axis{"schedule", {}};
    for (const auto& name : *it) {
      if (!name.is_string()) throw InputError(fmt::format("{}: field 'schedules' has {}: expected names", path, name.dump()));
      axis.values.push_back(name);
    }
    grid.axes.push_back(std::move(axis));
  }
  grid.size();  // throws when the grid has too many points

  // Every value once, on top of the first point: names, types and ranges fail here (exit 2);
  // combinations that cannot run (a model that does not fit) become rows later.
  for (const auto& axis : grid.axes) {
    for (const auto& value : axis.values) {
      Point point = grid.point(0);
      apply_axis(point, axis.key, value);
      const std::string context = fmt::format("{}: axis '{}' value {}", path, axis.key, value.dump());
      try {
        catalog::generators().get(point.schedule);
        catalog::EngineOptions engine;
        engine.engine = point.engine;
        catalog::check_engine_options(engine);
        Scenario scenario = scenario_from_json(point.scenario, path, grid.base_dir);
        derive_model_costs(scenario);
        scenario.spec.build(path);
      } catch (const models::SetupInfeasible&) {
        // A combination, not a bad value.
      } catch (const InputError& e) {
        std::string message = e.what();
        if (message.starts_with(path + ": ")) message.erase(0, path.size() + 2);  // named once, in front
        throw InputError(fmt::format("{}: {}", context, message));
      }
    }
  }
  return grid;
}

}  // namespace zb::sweep
