// The metrics table under the timeline: one row per thing on screen (or per schedule that failed),
// with the per-device span difference (ms and %) against the simulated trace it should be read beside.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gui/viewer_core/timeline_scene.h"

namespace zb::view {

struct MetricsRow {
  std::string label;
  std::string engine;
  std::string status = "ok";  // "ok", "over-limit: d0 peaks at ...", or why the schedule is missing
  std::optional<double> span, bubble_rate, peak_memory, step_time;
  std::string time_unit;
  std::string reference;              // the group the difference is taken against ("" = none)
  std::vector<double> span_delta;     // per device, in ms: this device span - the reference's
  std::string span_delta_text;        // "+0.5 -0.1 ..." (empty without a reference)
  double span_relative = 0;           // (span - the reference's span) / the reference's span
};

// A row for a schedule that could not be generated or evaluated.
MetricsRow failed_row(std::string label, std::string status);

// Per device, in ms: a.device_span[d] - b.device_span[d], over the devices both have.
std::vector<double> device_span_delta(const Trace& a, const Trace& b);

// The group that group `index` (a trace from another engine than "eval": SimGrid, a measured run)
// is compared with, or -1: a simulated group of the same pipeline (devices, microbatches and chunks
// that its spans show) and the same schedule (a measured trace that names none, like a
// torch.profiler run, matches on the pipeline alone). Groups of the same origin come first (a file
// with the simulated file loaded beside it, the explorer's SimGrid run with the explorer's
// evaluator run), then the first in order.
int reference_group(const TimelineScene& scene, int index);

// One row per group, with the difference against reference_group when there is one.
std::vector<MetricsRow> metrics_rows(const TimelineScene& scene);

// "span +3.2% vs zb-h1 (eval, sim.json); per device +0.5 -0.1 +0 +0 ms", or "" without a reference.
std::string difference_text(const MetricsRow& row);

// The whole table as tab-separated text (for the clipboard and for tests).
std::string to_tsv(const std::vector<MetricsRow>& rows);

}  // namespace zb::view
