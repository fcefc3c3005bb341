// Trace renderings for other tools: Chrome trace event JSON (Perfetto) and an SVG timeline.
#pragma once

#include <string>
#include <vector>

#include "sim/core/trace.h"

namespace zb {

// A trace with the label it is shown under (e.g. the schedule name) when several are drawn.
struct LabeledTrace {
  std::string label;
  const Trace* trace = nullptr;
};

// Chrome trace event JSON: a process per device (per trace), a thread per stream, microseconds,
// flow arrows from each producer to the consumer on another device, a memory counter track.
std::string to_chrome_trace(const std::vector<LabeledTrace>& traces);

// SVG timeline: a row per device, traces stacked on one time axis, F/B/W/BW in fixed colours,
// idle time visible, a legend and the metrics in each title.
std::string to_svg(const std::vector<LabeledTrace>& traces);

}  // namespace zb
