// Offloaded schedules on the frontier's axes (see frontier_offload.h).
#include "sim/app/catalog/frontier_offload.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/run_row.h"
#include "sim/support/error.h"

namespace zb::catalog {

namespace {

// The families drawn, from 1F1B's memory down; po-h and po-f choose their own offload.
constexpr const char* kOffloaded[] = {"1f1b", "zb-h1", "1f1b-i", "gis-h", "zb-v", "v-half", "v-min"};
constexpr const char* kPipeOffload[] = {"po-h", "po-f"};

OffloadPoint point_of(const ResultRow& row, int offload_chunks, double unit) {
  OffloadPoint point{offload_chunks, row.chunks, row.status, row.reason};
  if (!row.has_metrics) return point;
  const auto& peaks = row.metrics.peak_memory;
  point.peak_times_p = (peaks.empty() ? 0.0 : *std::max_element(peaks.begin(), peaks.end())) / unit;
  point.bubble_rate = row.metrics.bubble_rate;
  point.span = row.metrics.span;
  return point;
}

}  // namespace

std::vector<OffloadSeries> offload_series(const Scenario& scenario) {
  const Problem base = scenario.spec.build(scenario.source);
  if (base.t_offload.empty()) {
    throw InputError("--offload: the problem gives no copy time for offloads (--t-offload, or a model-driven scenario "
                     "on hardware with a host link)");
  }
  const double unit = base.devices * base.activation_unit();  // p * M_B, the frontier's unit
  const EngineOptions engine;
  std::vector<OffloadSeries> out;
  for (const char* name : kOffloaded) {
    OffloadSeries series{name, {}};
    Scenario at = scenario;
    at.offload_chunks = 0;
    const ResultRow plain = run_generator_row(name, at, engine, nullptr);
    series.points.push_back(point_of(plain, 0, unit));
    for (int k = 1; plain.has_metrics && k <= plain.chunks; ++k) {
      at.offload_chunks = k;
      series.points.push_back(point_of(run_generator_row(name, at, engine, nullptr), k, unit));
    }
    out.push_back(std::move(series));
  }
  for (const char* name : kPipeOffload) {
    Scenario at = scenario;
    at.offload_chunks = 0;
    out.push_back({name, {point_of(run_generator_row(name, at, engine, nullptr), -1, unit)}});
  }
  return out;
}

nlohmann::json offload_json(const std::vector<OffloadSeries>& series) {
  nlohmann::json items = nlohmann::json::array();
  for (const OffloadSeries& one : series) {
    nlohmann::json points = nlohmann::json::array();
    for (const OffloadPoint& point : one.points) {
      nlohmann::json item = {{"offload_chunks", point.offload_chunks}, {"chunks", point.chunks}, {"status", point.status}};
      if (!point.reason.empty()) item["reason"] = point.reason;
      if (point.status == "ok" || point.status == "over-limit") {
        item["peak_times_p"] = point.peak_times_p;
        item["bubble_rate"] = point.bubble_rate;
        item["span"] = point.span;
      }
      points.push_back(std::move(item));
    }
    items.push_back({{"schedule", one.schedule}, {"points", std::move(points)}});
  }
  return items;
}

}  // namespace zb::catalog
