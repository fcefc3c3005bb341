// The metrics table under the timeline (see metrics_table.h).
#include "gui/timeline/metrics_table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/schedule/memory.h"

namespace zb::view {

namespace {

bool simulated(const TraceGroup& group) {
  return group.trace.meta.engine.empty() || group.trace.meta.engine == "eval";
}

}  // namespace

MetricsRow failed_row(std::string label, std::string status) {
  MetricsRow row;
  row.label = std::move(label);
  row.status = std::move(status);
  return row;
}

std::vector<double> device_span_delta(const Metrics& a, const Metrics& b) {
  const std::size_t n = std::min(a.device_span.size(), b.device_span.size());
  std::vector<double> delta(n);
  for (std::size_t d = 0; d < n; ++d) delta[d] = a.device_span[d] - b.device_span[d];
  return delta;
}

std::vector<MetricsRow> metrics_rows(const TimelineScene& scene) {
  std::vector<MetricsRow> rows;
  const auto& groups = scene.groups();
  for (const TraceGroup& group : groups) {
    const Metrics& m = group.trace.metrics;
    MetricsRow row;
    row.label = group.label;
    row.engine = group.trace.meta.engine.empty() ? "eval" : group.trace.meta.engine;
    row.span = m.span;
    row.bubble_rate = m.bubble_rate;
    double peak = 0;
    for (double value : m.peak_memory) peak = std::max(peak, value);
    row.peak_memory = peak;
    row.step_time = m.makespan;
    row.time_unit = time_unit_name(group.trace.meta.time_unit);
    if (group.memory_limit) {
      if (const auto over = first_over_limit(m.peak_memory, *group.memory_limit)) {
        row.status = "over-limit: " + over->reason();
      }
    }
    if (!simulated(group) && !group.trace.meta.schedule.empty()) {
      auto ref = std::find_if(groups.begin(), groups.end(), [&](const TraceGroup& other) {
        return simulated(other) && other.trace.meta.schedule == group.trace.meta.schedule;
      });
      if (ref != groups.end()) {
        row.reference = ref->label;
        row.span_delta = device_span_delta(m, ref->trace.metrics);
        std::string text;
        for (double delta : row.span_delta) {
          // Differences at floating-point noise level (1e-15 from another engine's arithmetic) read as 0.
          if (std::abs(delta) <= 1e-9 * std::max(1.0, m.span)) delta = 0;
          text += fmt::format("{}{:+.3g}", text.empty() ? "" : " ", delta);
        }
        row.span_delta_text = text;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string to_tsv(const std::vector<MetricsRow>& rows) {
  auto number = [](const std::optional<double>& value) { return value ? fmt::format("{:.6g}", *value) : std::string(); };
  std::string out = "schedule\tengine\tstatus\tspan\tbubble rate\tpeak memory\tstep time\tunit\tspan difference per device\n";
  for (const MetricsRow& row : rows) {
    std::string delta = row.reference.empty() ? "" : fmt::format("vs {}: {}", row.reference, row.span_delta_text);
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", row.label, row.engine, row.status, number(row.span),
                       number(row.bubble_rate), number(row.peak_memory), number(row.step_time), row.time_unit, delta);
  }
  return out;
}

}  // namespace zb::view
