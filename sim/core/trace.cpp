// Stream names and the metrics every engine derives from its trace.
#include "sim/core/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/support/error.h"

namespace zb {

std::string_view stream_name(Stream stream) {
  switch (stream) {
    case Stream::compute: return "compute";
    case Stream::send: return "send";
    case Stream::recv: return "recv";
    case Stream::copy: return "copy";
  }
  return "?";
}

Stream parse_stream(std::string_view text, std::string_view context) {
  if (text == "compute") return Stream::compute;
  if (text == "send") return Stream::send;
  if (text == "recv") return Stream::recv;
  if (text == "copy") return Stream::copy;
  throw InputError(fmt::format("{}: unknown stream '{}' (expected compute, send, recv or copy)", context, text));
}

double peak_of(const std::vector<MemoryPoint>& timeline) {
  double peak = 0;
  for (const auto& point : timeline) peak = std::max(peak, point.value);
  return peak;
}

Metrics compute_metrics(const Trace& trace, double work) {
  Metrics metrics;
  const auto p = static_cast<std::size_t>(trace.devices);
  std::vector<double> first(p, std::numeric_limits<double>::infinity());
  std::vector<double> last(p, 0.0);
  metrics.busy.assign(p, 0.0);
  for (const Span& span : trace.spans) {
    if (span.stream != Stream::compute || span.step != 0) continue;
    const auto d = static_cast<std::size_t>(span.device);
    first[d] = std::min(first[d], span.start);
    last[d] = std::max(last[d], span.end);
    metrics.busy[d] += span.duration();
  }
  metrics.device_span.assign(p, 0.0);
  for (std::size_t d = 0; d < p; ++d) {
    if (first[d] <= last[d]) metrics.device_span[d] = last[d] - first[d];
    metrics.makespan = std::max(metrics.makespan, last[d]);
    metrics.span = std::max(metrics.span, metrics.device_span[d]);
  }
  metrics.idle.resize(p);
  for (std::size_t d = 0; d < p; ++d) metrics.idle[d] = metrics.makespan - metrics.busy[d];
  metrics.peak_memory.assign(p, 0.0);
  for (std::size_t d = 0; d < std::min(p, trace.memory.size()); ++d) metrics.peak_memory[d] = peak_of(trace.memory[d]);
  metrics.work = work;
  metrics.bubble_rate = metrics.span > 0 ? (metrics.span - work) / metrics.span : 0.0;
  return metrics;
}

}  // namespace zb
