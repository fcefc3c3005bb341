// The metrics table under the timeline: one row per thing on screen (or per schedule that failed),
// with the per-device span difference against the simulated trace of the same schedule.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gui/timeline/timeline_scene.h"

namespace zb::view {

struct MetricsRow {
  std::string label;
  std::string engine;
  std::string status = "ok";  // "ok", "over-limit: d0 peaks at ...", or why the schedule is missing
  std::optional<double> span, bubble_rate, peak_memory, step_time;
  std::string time_unit;
  std::string reference;              // the group the difference is taken against ("" = none)
  std::vector<double> span_delta;     // per device: this device span - the reference's
  std::string span_delta_text;        // "+0.5 -0.1 ..." (empty without a reference)
};

// A row for a schedule that could not be generated or evaluated.
MetricsRow failed_row(std::string label, std::string status);

// Per device: a.device_span[d] - b.device_span[d], over the devices both have.
std::vector<double> device_span_delta(const Metrics& a, const Metrics& b);

// One row per group. A group whose trace comes from another engine than "eval" (SimGrid, a measured
// run) is compared with the first simulated group of the same schedule name, when there is one.
std::vector<MetricsRow> metrics_rows(const TimelineScene& scene);

// The whole table as tab-separated text (for the clipboard and for tests).
std::string to_tsv(const std::vector<MetricsRow>& rows);

}  // namespace zb::view
