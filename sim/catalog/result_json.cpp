// The JSON form of result rows.
#include "sim/catalog/result_json.h"

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

nlohmann::json results_json(const ProblemSpec& spec, const std::vector<ResultRow>& rows) {
  nlohmann::json results = nlohmann::json::array();
  for (const ResultRow& row : rows) results.push_back(to_json(row));
  return {{"problem", zb::to_json(spec)}, {"results", std::move(results)}};
}

}  // namespace zb::catalog
