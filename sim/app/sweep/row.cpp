// Running one sweep point (scenario, cost model, generator, engine) and formatting its row.
#include "sim/app/sweep/row.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "sim/app/catalog/engines.h"
#include "sim/support/csv_field.h"
#include "sim/support/error.h"
#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/run_row.h"
#include "models/presets.h"
#include "models/setup_infeasible.h"
#include "sim/app/catalog/preset_files.h"

namespace zb::sweep {

using ojson = nlohmann::ordered_json;

const std::vector<std::string>& input_columns() {
  static const std::vector<std::string> columns = {
      "model", "hardware", "cluster", "microbatch_size", "p", "m", "chunks", "placement", "schedule", "engine",
      "mem_limit", "mem_limit_abs", "t_f", "t_b", "t_w", "t_comm", "mem_f", "time_unit"};
  return columns;
}

const std::vector<std::string>& metric_columns() {
  static const std::vector<std::string> columns = {
      "status", "makespan", "span", "work", "bubble_rate", "samples_per_s_per_gpu", "peak_memory_max", "idle_max",
      "peak_memory", "idle", "step_time", "step_time_sync", "step_time_post_validation",
      "samples_per_s_per_gpu_sync", "samples_per_s_per_gpu_post_validation", "tokens_per_s", "tokens_per_s_sync",
      "tokens_per_s_post_validation", "mfu", "mfu_sync", "mfu_post_validation", "memory_GB", "reason"};
  return columns;
}

std::vector<std::string> result_columns(const Grid& grid) {
  std::vector<std::string> columns = {"point"};
  for (const auto& extra : grid.extra_columns()) columns.push_back(extra);
  for (const auto& c : input_columns()) columns.push_back(c);
  for (const auto& c : metric_columns()) columns.push_back(c);
  return columns;
}

std::string csv_header(const Grid& grid) { return fmt::format("{}", fmt::join(result_columns(grid), ",")); }

namespace {

std::string csv_cell(const ojson& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return csv_field(value.get<std::string>());
  if (value.is_number_integer()) return fmt::format("{}", value.get<long long>());
  if (value.is_number()) return fmt::format("{}", value.get<double>());
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_array()) {
    std::vector<std::string> parts;
    for (const auto& item : value) parts.push_back(item.is_string() ? item.get<std::string>() : csv_cell(item));
    return csv_field(fmt::format("{}", fmt::join(parts, ";")));
  }
  return csv_field(value.dump());  // inline objects
}

// A per-stage array as written in a row: one number when all are equal.
ojson compact(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  if (std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); })) return values.front();
  return values;
}

double max_of(const std::vector<double>& values) {
  return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
}

// The label a preset value is written as: its name or path, or the "name" of an inline object.
ojson label_of(const nlohmann::json& scenario, const char* key) {
  const auto it = scenario.find(key);
  if (it == scenario.end() || it->is_null()) return nullptr;
  if (it->is_object()) return it->contains("name") ? ojson((*it)["name"]) : ojson("inline");
  return ojson(*it);
}

}  // namespace

namespace {

// The columns a row of `point` carries before it runs: the axes and the inputs as written.
ojson row_inputs(const Grid& grid, const Point& point) {
  ojson row = ojson::object();
  row["point"] = point.index;
  for (const auto& extra : grid.extra_columns()) row[extra] = point.axes[extra];
  const nlohmann::json& sc = point.scenario;
  const nlohmann::json problem_in = sc.contains("problem") ? sc["problem"] : nlohmann::json::object();
  const bool model_driven = sc.contains("model");
  row["model"] = label_of(sc, "model");
  row["hardware"] = label_of(sc, "hardware");
  row["cluster"] = label_of(sc, "cluster");
  row["microbatch_size"] = model_driven ? ojson(sc.value("microbatch_size", nlohmann::json(1))) : ojson(nullptr);
  row["p"] = problem_in.contains("p") ? ojson(problem_in["p"]) : ojson(nullptr);
  row["m"] = problem_in.contains("m") ? ojson(problem_in["m"]) : ojson(nullptr);
  for (const char* key : {"chunks", "placement"}) row[key] = nullptr;
  row["schedule"] = point.schedule;
  row["engine"] = point.engine;
  row["mem_limit"] = problem_in.contains("mem_limit") ? ojson(problem_in["mem_limit"])
                                                      : ojson(model_driven ? ojson("auto") : ojson(nullptr));
  for (const auto& c : input_columns()) {
    if (!row.contains(c)) row[c] = nullptr;
  }
  for (const auto& c : metric_columns()) row[c] = nullptr;
  row["status"] = "ok";
  return row;
}

// The row's CSV and JSON-lines forms.
Row finished_row(const Point& point, const ojson& row) {
  Row out;
  out.point = point.index;
  out.status = row["status"].get<std::string>();
  std::vector<std::string> cells;
  for (const auto& [key, value] : row.items()) cells.push_back(csv_cell(value));
  out.csv_line = fmt::format("{}", fmt::join(cells, ","));
  ojson json = ojson::object();
  json["point"] = point.index;
  json["grid_points"] = point.of;
  json["axes"] = point.axes;
  for (const auto& [key, value] : row.items()) {
    if (key != "point") json[key] = value;
  }
  out.json_line = json.dump();
  return out;
}

}  // namespace

Row failed_point_row(const Grid& grid, const Point& point, const std::string& reason) {
  ojson row = row_inputs(grid, point);
  row["status"] = "error";
  row["reason"] = reason;
  return finished_row(point, row);
}

Row run_point(const Grid& grid, const Point& point) {
  ojson row = row_inputs(grid, point);
  const nlohmann::json& sc = point.scenario;
  const bool model_driven = sc.contains("model");
  try {
    Scenario scenario = scenario_from_json(sc, grid.source, grid.base_dir);
    scenario.source = fmt::format("{} point {}", grid.source, point.index);
    derive_model_costs(scenario);
    const Problem problem = scenario.spec.build(scenario.source);
    row["p"] = problem.devices;
    row["m"] = problem.microbatches;
    row["chunks"] = problem.chunks;
    row["placement"] = std::string(placement_name(problem.placement));
    if (const auto limit = problem.memory_limit()) row["mem_limit_abs"] = *limit;
    row["t_f"] = compact(problem.t_f);
    row["t_b"] = compact(problem.t_b);
    row["t_w"] = compact(problem.t_w);
    row["t_comm"] = compact(problem.t_comm);
    row["mem_f"] = compact(problem.mem_f);
    row["time_unit"] = time_unit_name(problem.time_unit);

    catalog::EngineOptions engine;
    engine.engine = point.engine;
    if (point.engine == "simgrid" && sc.contains("cluster") && !sc["cluster"].is_null()) {
      const auto cluster = models::resolve_preset("clusters", sc["cluster"], grid.base_dir, "cluster", catalog::read_preset_file);
      if (cluster.path.empty()) throw InputError("cluster: the SimGrid engine needs a cluster file, not an object");
      engine.cluster = cluster.path.string();
    }
    const catalog::ResultRow result = catalog::run_generator_row(point.schedule, scenario, engine, nullptr);
    row["status"] = result.status;
    row["chunks"] = result.chunks;
    if (!result.reason.empty()) row["reason"] = result.reason;
    if (result.has_metrics) {
      const Metrics& m = result.metrics;
      row["makespan"] = m.makespan;
      row["span"] = m.span;
      row["work"] = m.work;
      row["bubble_rate"] = m.bubble_rate;
      row["peak_memory_max"] = max_of(m.peak_memory);
      row["idle_max"] = max_of(m.idle);
      row["peak_memory"] = m.peak_memory;
      row["idle"] = m.idle;
      const auto& columns = metric_columns();
      for (const auto& [key, value] : result.extras) {
        if (std::find(columns.begin(), columns.end(), key) != columns.end()) row[key] = value;
      }
      // A direct problem has no model: a microbatch counts as one sample (model-driven rows carry
      // their throughput figures, throughput_extras.h).
      const double unit = seconds_per(problem.time_unit);
      if (!model_driven && unit > 0 && row.contains("step_time") && row["step_time"].get<double>() > 0) {
        row["samples_per_s_per_gpu"] =
            problem.microbatches / (row["step_time"].get<double>() * unit) / problem.devices;
      }
    }
  } catch (const models::SetupInfeasible& e) {
    row["status"] = "infeasible";
    row["reason"] = e.what();
  } catch (const ScheduleError& e) {
    row["status"] = "infeasible";
    row["reason"] = e.what();
  } catch (const InputError& e) {
    row["status"] = "unsupported";
    row["reason"] = e.what();
  } catch (const Error& e) {
    // An engine that failed on this point (e.g. a SimGrid child that died): the sweep goes on.
    row["status"] = "error";
    row["reason"] = e.what();
  }

  return finished_row(point, row);
}

}  // namespace zb::sweep
