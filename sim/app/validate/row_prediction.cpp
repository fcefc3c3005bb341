// A prepared row's scenario through the cost model and an engine.
#include "sim/app/validate/row_prediction.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/run_row.h"
#include "sim/app/catalog/scenario.h"
#include "sim/app/validate/detail/row_cells.h"
#include "sim/app/validate/measured_target.h"
#include "sim/app/validate/row_scenario.h"
#include "sim/support/error.h"
#include "sim/support/time_units.h"

namespace zb::validate {

namespace {

std::string group_key(const std::string& model_name, const RowModel& m, const MeasuredRow& row) {
  const std::string shape = m.layers > 0 ? fmt::format("L{} h{} a{}/{} f{} V{} s{}", m.layers, m.hidden, m.heads,
                                                       m.kv_heads, m.ffn_hidden, m.vocab, m.seq_len)
                                         : model_name;
  const std::string experts = row.cell("moe_experts").empty() ? "" : fmt::format(" E{}", row.cell("moe_experts"));
  return fmt::format("{}{} | {} {}", shape, experts, row.cell("gpu"), row.cell("interconnect"));
}

}  // namespace

PreparedRow prepare_row(const MeasuredRow& row, const std::string& file) {
  PreparedRow p;
  RowResult& r = p.result;
  r.line = row.line;
  r.id = row.id();
  r.source = row.cell("source");
  r.model = row.cell("model");
  r.gpu = row.cell("gpu");
  r.precision = row.cell("precision").empty() ? "unstated" : row.cell("precision");
  r.schedule = row.cell("schedule");
  const RowScenario rs = row_scenario(row, file);
  const MeasuredTarget target = measured_target(row, rs.model, file);
  r.generator = rs.schedule;
  r.group = group_key(r.model, rs.model, row);
  r.assumptions = rs.assumptions;
  r.uncovered = rs.uncovered;
  r.measured = target.tokens_per_s_per_gpu;
  r.measured_how = target.how;
  r.excluded = target.excluded;
  if (!target.missing.empty()) r.uncovered.push_back(target.missing);
  if (r.uncovered.empty()) {
    p.scenario = rs.scenario;
    (*p.scenario)["name"] = row_label(row, file);
  }
  p.hardware_object = rs.hardware_object;
  p.hardware = rs.hardware;
  p.architecture = rs.architecture;
  p.seq_len = rs.model.seq_len;
  return p;
}

RowResult predict_row(const PreparedRow& p, const PredictionSettings& settings) {
  RowResult r = p.result;
  if (!p.scenario) return r;
  nlohmann::json object = *p.scenario;
  object["cost_model"] = models::cost_model_name(settings.cost_model);
  if (settings.efficiencies) {
    object["hardware"] = p.hardware_object;
    models::write_efficiencies(*settings.efficiencies, object["hardware"]);
  }
  try {
    Scenario scenario = scenario_from_json(object, object["name"].get<std::string>(), "");
    derive_model_costs(scenario);
    catalog::EngineOptions engine;
    engine.engine = settings.engine;
    if (settings.engine == "simgrid") {
      // SimGrid reads its cluster from a file.
      const std::filesystem::path path = std::filesystem::path(settings.cluster_folder) / (r.id + ".json");
      std::ofstream(path) << object["cluster"].dump(2) << "\n";
      engine.cluster = path.string();
    }
    const catalog::ResultRow row = catalog::run_generator_row(r.generator, scenario, engine, nullptr);
    const auto step = catalog::row_extra(row, "step_time");
    const auto samples = catalog::row_extra(row, "samples_per_s_per_gpu");
    if (!row.has_metrics || !step || !samples) {
      r.uncovered.push_back(fmt::format("zbsim could not run it: {} {}", row.status, row.reason));
      return r;
    }
    r.step_time_s = *step * seconds_per(scenario.spec.time_unit);
    r.predicted = *samples * p.seq_len;
    r.mfu = catalog::row_extra(row, "mfu").value_or(0);
    r.memory_GB = catalog::row_extra(row, "memory_GB").value_or(0);
    r.memory_capacity_GB = scenario.model->hardware.memory_GB - scenario.model->hardware.reserved_GB;
  } catch (const InputError& error) {  // a setup the cost model refuses (SetupInfeasible and the like)
    r.uncovered.push_back(fmt::format("the cost model refuses it: {}", error.what()));
  }
  return r;
}

}  // namespace zb::validate
