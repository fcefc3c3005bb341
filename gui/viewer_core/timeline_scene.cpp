// What the timeline shows, independent of pixels (see timeline_scene.h).
#include "gui/viewer_core/timeline_scene.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sim/core/action.h"

namespace zb::view {

namespace {

// The compute span that consumes what span `s` produces, keyed for lookup.
using SpanKey = std::tuple<int, int, int>;  // stage, microbatch, direction (0 forward, 1 backward)

int direction_of(Pass pass) { return pass == Pass::F ? 0 : (pass == Pass::W ? -1 : 1); }

}  // namespace

std::vector<Interval> gaps_between(const std::vector<Interval>& busy_sorted, double end, double min_gap) {
  std::vector<Interval> gaps;
  double cursor = 0;
  for (const Interval& busy : busy_sorted) {
    if (busy.start - cursor > min_gap) gaps.push_back({cursor, busy.start});
    cursor = std::max(cursor, busy.end);
  }
  if (end - cursor > min_gap) gaps.push_back({cursor, end});
  return gaps;
}

TraceGroup make_group(std::string label, zb::Trace trace, std::optional<double> memory_limit,
                      double min_gap_fraction) {
  TraceGroup group;
  group.label = std::move(label);
  group.memory_limit = memory_limit;

  int devices = trace.devices;
  for (const Span& span : trace.spans) devices = std::max(devices, span.device + 1);
  devices = std::max(devices, static_cast<int>(trace.memory.size()));
  group.device_spans.resize(static_cast<std::size_t>(devices));
  group.device_copies.resize(static_cast<std::size_t>(devices));

  std::map<SpanKey, int> consumers;
  for (std::size_t i = 0; i < trace.spans.size(); ++i) {
    const Span& span = trace.spans[i];
    if (span.device < 0) continue;
    const auto device = static_cast<std::size_t>(span.device);
    if (span.stream == Stream::copy) group.device_copies[device].push_back(static_cast<int>(i));
    if (span.stream != Stream::compute) continue;
    group.device_spans[device].push_back(static_cast<int>(i));
    group.end_time = std::max(group.end_time, span.end);
    const int direction = direction_of(span.pass);
    if (direction >= 0) consumers.emplace(SpanKey{span.stage, span.microbatch, direction}, static_cast<int>(i));
  }
  for (const auto& timeline : trace.memory) {
    for (const MemoryPoint& point : timeline) group.memory_peak = std::max(group.memory_peak, point.value);
  }

  const double min_gap = group.end_time * min_gap_fraction;
  group.idle.resize(group.device_spans.size());
  for (std::size_t d = 0; d < group.device_spans.size(); ++d) {
    auto& indices = group.device_spans[d];
    // Stable on (start, end) with the index as the last key: identical input, identical order.
    std::sort(indices.begin(), indices.end(), [&](int a, int b) {
      const Span& x = trace.spans[static_cast<std::size_t>(a)];
      const Span& y = trace.spans[static_cast<std::size_t>(b)];
      return std::tie(x.start, x.end, a) < std::tie(y.start, y.end, b);
    });
    std::vector<Interval> busy;
    busy.reserve(indices.size());
    for (int i : indices) busy.push_back({trace.spans[static_cast<std::size_t>(i)].start, trace.spans[static_cast<std::size_t>(i)].end});
    group.idle[d] = gaps_between(busy, group.end_time, min_gap);
  }

  for (const auto& indices : group.device_spans) {
    for (int i : indices) {
      const Span& span = trace.spans[static_cast<std::size_t>(i)];
      const int direction = direction_of(span.pass);
      if (direction < 0) continue;
      const int next_stage = direction == 0 ? span.stage + 1 : span.stage - 1;
      auto it = consumers.find(SpanKey{next_stage, span.microbatch, direction});
      if (it == consumers.end()) continue;
      if (trace.spans[static_cast<std::size_t>(it->second)].device == span.device) continue;
      group.arrows.push_back({i, it->second});
    }
  }

  if (trace.meta.engine == "cpu" || trace.meta.engine == "cuda") group.memory_unit = "bytes";
  group.trace = std::move(trace);
  return group;
}

bool TraceGroup::has_copies() const {
  return std::any_of(device_copies.begin(), device_copies.end(), [](const auto& copies) { return !copies.empty(); });
}

bool has_memory(const zb::Trace& trace) {
  return std::any_of(trace.memory.begin(), trace.memory.end(), [](const auto& timeline) { return !timeline.empty(); });
}

double TimelineScene::end_time() const {
  double end = 0;
  for (const auto& group : groups_) end = std::max(end, group.end_time);
  return end;
}

int TimelineScene::row_count() const {
  int rows = 0;
  for (const auto& group : groups_) rows += group.devices();
  return rows;
}

std::string TimelineScene::time_unit() const {
  return groups_.empty() ? std::string() : std::string(time_unit_name(groups_.front().trace.meta.time_unit));
}

std::string describe_span(const TraceGroup& group, int span_index) {
  const Span& span = group.trace.spans.at(static_cast<std::size_t>(span_index));
  const std::string token = to_token(Action{span.pass, span.microbatch, span.chunk});
  const std::string_view unit = time_unit_name(group.trace.meta.time_unit);
  const std::string_view copy = span.stream != Stream::copy ? ""
                                : span.pass == Pass::O      ? ", copy engine: offload to host"
                                                            : ", copy engine: reload from host";
  return fmt::format(
      "{}: {} (stage {}, chunk {}, microbatch {}) on device {}{}\nstart {:.6g} {}, end {:.6g} {}, duration {:.6g} {}",
      group.label, token, span.stage, span.chunk, span.microbatch, span.device, copy, span.start, unit, span.end, unit,
      span.duration(), unit);
}

}  // namespace zb::view
