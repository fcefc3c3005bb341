// The metrics table under the timeline (see metrics_table.h).
#include "gui/viewer_core/metrics_table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/memory.h"
#include "sim/support/time_units.h"

namespace zb::view {

namespace {

bool simulated(const TraceGroup& group) {
  return group.trace.meta.engine.empty() || group.trace.meta.engine == "eval";
}

double ms_per(const Trace& trace) { return seconds_per(trace.meta.time_unit) * 1e3; }

// What the spans show of the pipeline: two traces of it are comparable, whatever their costs.
struct PipelineShape {
  int devices = 0, microbatches = 0, chunks = 0;
  friend bool operator==(const PipelineShape&, const PipelineShape&) = default;
};

PipelineShape shape_of(const TraceGroup& group) {
  PipelineShape shape;
  shape.devices = group.devices();
  for (const Span& span : group.trace.spans) {
    if (span.stream != Stream::compute) continue;
    shape.microbatches = std::max(shape.microbatches, span.microbatch + 1);
    shape.chunks = std::max(shape.chunks, span.chunk + 1);
  }
  return shape;
}

}  // namespace

MetricsRow failed_row(std::string label, std::string status) {
  MetricsRow row;
  row.label = std::move(label);
  row.status = std::move(status);
  return row;
}

std::vector<double> device_span_delta(const Trace& a, const Trace& b) {
  const std::size_t n = std::min(a.metrics.device_span.size(), b.metrics.device_span.size());
  std::vector<double> delta(n);
  for (std::size_t d = 0; d < n; ++d) delta[d] = a.metrics.device_span[d] * ms_per(a) - b.metrics.device_span[d] * ms_per(b);
  return delta;
}

int reference_group(const TimelineScene& scene, int index) {
  const auto& groups = scene.groups();
  const TraceGroup& group = groups.at(static_cast<std::size_t>(index));
  if (simulated(group)) return -1;
  const PipelineShape shape = shape_of(group);
  const std::string& schedule = group.trace.meta.schedule;
  int fallback = -1;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const TraceGroup& other = groups[i];
    if (!simulated(other) || shape_of(other) != shape) continue;
    if (!schedule.empty() && other.trace.meta.schedule != schedule) continue;
    if (other.from_file == group.from_file) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

std::vector<MetricsRow> metrics_rows(const TimelineScene& scene) {
  std::vector<MetricsRow> rows;
  const auto& groups = scene.groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const TraceGroup& group = groups[g];
    const Metrics& m = group.trace.metrics;
    MetricsRow row;
    row.label = group.label;
    row.engine = group.trace.meta.engine.empty() ? "eval" : group.trace.meta.engine;
    row.span = m.span;
    row.bubble_rate = m.bubble_rate;
    if (has_memory(group.trace)) {  // a torch.profiler run recorded none: no peak, not a peak of 0
      double peak = 0;
      for (double value : m.peak_memory) peak = std::max(peak, value);
      row.peak_memory = peak;
    }
    row.step_time = m.makespan;
    row.time_unit = time_unit_name(group.trace.meta.time_unit);
    if (group.memory_limit) {
      if (const auto over = first_over_limit(m.peak_memory, *group.memory_limit)) {
        row.status = "over-limit: " + over->reason();
      }
    }
    if (const int ref = reference_group(scene, static_cast<int>(g)); ref >= 0) {
      const Trace& reference = groups[static_cast<std::size_t>(ref)].trace;
      row.reference = groups[static_cast<std::size_t>(ref)].label;
      row.span_delta = device_span_delta(group.trace, reference);
      const double span_ms = m.span * ms_per(group.trace);
      const double reference_ms = reference.metrics.span * ms_per(reference);
      // Differences at floating-point noise level (1e-15 from another engine's arithmetic) read as 0.
      const double noise = 1e-9 * std::max(1.0, span_ms);
      row.span_relative = reference_ms > 0 && std::abs(span_ms - reference_ms) > noise
                              ? (span_ms - reference_ms) / reference_ms
                              : 0.0;
      std::string text;
      for (double delta : row.span_delta) {
        if (std::abs(delta) <= noise) delta = 0;
        text += fmt::format("{}{:+.3g}", text.empty() ? "" : " ", delta);
      }
      row.span_delta_text = text;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string difference_text(const MetricsRow& row) {
  if (row.reference.empty()) return "";
  // The span's relative difference first: the number to read when the column is narrow.
  return fmt::format("span {:+.1f}% vs {}; per device {} ms", 100 * row.span_relative, row.reference,
                     row.span_delta_text);
}

std::string to_tsv(const std::vector<MetricsRow>& rows) {
  auto number = [](const std::optional<double>& value) { return value ? fmt::format("{:.6g}", *value) : std::string(); };
  std::string out = "schedule\tengine\tstatus\tspan\tbubble rate\tpeak memory\tstep time\tunit\tspan difference per device\n";
  for (const MetricsRow& row : rows) {
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", row.label, row.engine, row.status, number(row.span),
                       number(row.bubble_rate), number(row.peak_memory), number(row.step_time), row.time_unit, difference_text(row));
  }
  return out;
}

}  // namespace zb::view
