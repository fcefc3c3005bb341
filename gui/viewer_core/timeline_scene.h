// What the timeline shows, independent of pixels: groups of device rows (one group per trace),
// their compute spans sorted per device, their copy spans, the idle gaps (bubbles) and the
// communication arrows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/trace.h"

namespace zb::view {

struct Interval {
  double start = 0;
  double end = 0;

  double length() const { return end - start; }
};

// A producer -> consumer dependency between compute spans on different devices: F(s) -> F(s+1),
// B or BW(s) -> B or BW(s-1), for the same microbatch. Indices into Trace::spans.
struct CommArrow {
  int from_span = 0;
  int to_span = 0;
};

struct TraceGroup {
  std::string label;
  zb::Trace trace;
  std::optional<double> memory_limit;  // absolute, in the units of the memory timeline
  // Opened from a file (a trace, or a schedule file evaluated on the panel's problem) rather than
  // made by the explorer: comparisons look among groups of the same origin first (metrics_table.h).
  bool from_file = false;
  // The unit of the memory timeline: zbexec counts bytes, the simulators M_B (one microbatch's
  // activations of one stage) unless the costs came from a model (GB: the window says so).
  std::string memory_unit = "M_B";

  std::vector<std::vector<int>> device_spans;  // per device: compute span indices sorted by start
  // Per device: its copy span indices (offloads and reloads). They run on the device's copy engine
  // beside compute, so they are neither busy time nor bubbles of the row.
  std::vector<std::vector<int>> device_copies;
  std::vector<std::vector<Interval>> idle;     // per device: gaps in [0, end_time]
  std::vector<CommArrow> arrows;
  double end_time = 0;     // last end of any compute span
  double memory_peak = 0;  // the largest memory value of any device

  int devices() const { return static_cast<int>(device_spans.size()); }
  bool has_copies() const;
};

// Builds the derived data of a group from its trace. Gaps shorter than `min_gap` (relative to the
// group's end time) are not bubbles: they come from floating-point noise in measured traces.
TraceGroup make_group(std::string label, zb::Trace trace, std::optional<double> memory_limit,
                      double min_gap_fraction = 1e-9);

class TimelineScene {
 public:
  void add(TraceGroup group) { groups_.push_back(std::move(group)); }
  void clear() { groups_.clear(); }

  const std::vector<TraceGroup>& groups() const { return groups_; }
  bool empty() const { return groups_.empty(); }
  // The latest end time of all groups (the common time axis runs from 0 to it).
  double end_time() const;
  // Device rows over all groups.
  int row_count() const;
  // The time unit of the first group ("" when empty).
  std::string time_unit() const;

 private:
  std::vector<TraceGroup> groups_;
};

// Whether the trace recorded any memory (a torch.profiler run records none).
bool has_memory(const zb::Trace& trace);

// Idle intervals of sorted, possibly overlapping busy intervals inside [0, end].
std::vector<Interval> gaps_between(const std::vector<Interval>& busy_sorted, double end, double min_gap);

// "F3 (stage 2, chunk 1) on device 1 / start 12 ms, end 13 ms, duration 1 ms": the tooltip; a copy
// says which way it goes and that it runs on the copy engine.
std::string describe_span(const TraceGroup& group, int span_index);

}  // namespace zb::view
