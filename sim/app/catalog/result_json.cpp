// The JSON form of result rows.
#include "sim/app/catalog/result_json.h"

namespace zb::catalog {

nlohmann::json to_json(const ResultRow& row) {
  nlohmann::json item = {{"schedule", row.schedule}, {"status", row.status}, {"chunks", row.chunks}};
  if (row.has_metrics) {
    item["makespan"] = row.metrics.makespan;
    item["span"] = row.metrics.span;
    item["work"] = row.metrics.work;
    item["bubble_rate"] = row.metrics.bubble_rate;
    item["peak_memory"] = row.metrics.peak_memory;
    item["idle"] = row.metrics.idle;
  }
  for (const auto& [key, value] : row.extras) item[key] = value;
  if (!row.reason.empty()) item["reason"] = row.reason;
  return item;
}

nlohmann::json results_json(const ProblemSpec& spec, const std::vector<ResultRow>& rows, const ModelMemory* memory) {
  nlohmann::json results = nlohmann::json::array();
  for (const ResultRow& row : rows) {
    results.push_back(to_json(row));
    if (memory != nullptr && !row.memory_per_device_GB.empty()) results.back()["memory_per_device_GB"] = row.memory_per_device_GB;
  }
  nlohmann::json out = {{"problem", zb::to_json(spec)}, {"results", std::move(results)}};
  if (memory != nullptr) {
    nlohmann::json parts = {{"device_GB", memory->device_GB}, {"reserved_GB", memory->reserved_GB}};
    const auto column = [&](const char* key, auto part) {
      std::vector<double> values;
      for (const auto& device : memory->static_per_device) values.push_back(part(device));
      parts[key] = values;
    };
    column("static_GB", [](const models::StaticMemory& m) { return m.total_GB(); });
    column("parameters_GB", [](const models::StaticMemory& m) { return m.parameters_GB; });
    column("gradients_GB", [](const models::StaticMemory& m) { return m.gradients_GB; });
    column("optimizer_GB", [](const models::StaticMemory& m) { return m.optimizer_GB; });
    column("gathered_GB", [](const models::StaticMemory& m) { return m.gathered_GB; });
    out["memory"] = std::move(parts);
  }
  return out;
}

}  // namespace zb::catalog
