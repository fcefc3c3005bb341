// Pixel geometry of the timeline (see timeline_layout.h).
#include "gui/timeline/timeline_layout.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace zb::view {

namespace {

// Clips [x0, x1) to the plot; false when nothing is left.
bool clip(double& x0, double& x1, const RectPx& plot) {
  x0 = std::max(x0, plot.x);
  x1 = std::min(x1, plot.right());
  return x1 > x0;
}

double group_height(const TraceGroup& group, const LayoutStyle& style) {
  double h = style.group_header_px + group.devices() * (style.row_height_px + style.row_gap_px);
  if (style.show_memory && !group.trace.memory.empty()) h += style.memory_height_px + style.row_gap_px;
  return h;
}

MemoryChartItem memory_chart(const TraceGroup& group, int group_index, const Viewport& viewport,
                             const RectPx& rect, const RectPx& plot) {
  MemoryChartItem chart;
  chart.rect = rect;
  chart.group = group_index;
  // A limit far above the peak (device memory of a big GPU) would flatten the lines to the floor:
  // then the chart scales to the peak and the caption gives the limit.
  const bool limit_in_scale = group.memory_limit && *group.memory_limit <= 2 * group.memory_peak;
  double top = std::max(group.memory_peak, limit_in_scale ? *group.memory_limit : 0.0);
  if (!(top > 0)) top = 1;
  chart.max_value = top * 1.1;  // headroom so the peak and the limit are not on the frame
  auto y_of = [&](double value) { return rect.bottom() - value / chart.max_value * rect.h; };
  auto x_of = [&](double time) { return std::clamp(plot.x + viewport.x_of(time), plot.x, plot.right()); };
  for (const auto& timeline : group.trace.memory) {
    std::vector<PointPx> line;
    double value = 0;
    line.push_back({x_of(0), y_of(0)});
    for (const MemoryPoint& point : timeline) {
      const double x = x_of(point.time);
      line.push_back({x, y_of(value)});
      value = point.value;
      line.push_back({x, y_of(value)});
    }
    line.push_back({x_of(group.end_time), y_of(value)});
    chart.device_lines.push_back(std::move(line));
  }
  if (limit_in_scale) chart.limit_y = y_of(*group.memory_limit);
  if (!group.memory_limit) {
    chart.caption = fmt::format("memory (peak {})", format_amount(group.memory_peak));
  } else {
    chart.caption = fmt::format("memory (peak {}, limit {}{})", format_amount(group.memory_peak),
                                format_amount(*group.memory_limit), limit_in_scale ? "" : ", above the chart");
  }
  return chart;
}

}  // namespace

double plot_width(double width_px, const LayoutStyle& style) {
  return std::max(1.0, width_px - style.label_width_px - style.right_margin_px);
}

double layout_height(const TimelineScene& scene, const LayoutStyle& style) {
  double h = style.axis_height_px;
  for (const auto& group : scene.groups()) h += group_height(group, style) + style.group_gap_px;
  return h;
}

std::string format_amount(double value) {
  const double magnitude = std::abs(value);
  if (magnitude >= 1e9) return fmt::format("{:.3g}G", value / 1e9);
  if (magnitude >= 1e6) return fmt::format("{:.3g}M", value / 1e6);
  if (magnitude >= 1e4) return fmt::format("{:.3g}k", value / 1e3);
  return fmt::format("{:.4g}", value);
}

double percent(double fraction) {
  const double value = 100.0 * fraction;
  return std::abs(value) < 5e-3 ? 0.0 : value;  // no "-0.0%" from rounding noise
}

std::string group_title(const TraceGroup& group) {
  const Metrics& m = group.trace.metrics;
  const std::string_view unit = time_unit_name(group.trace.meta.time_unit);
  double peak = 0;
  for (double value : m.peak_memory) peak = std::max(peak, value);
  std::string title = group.label;
  std::string lower_label = group.label;
  std::transform(lower_label.begin(), lower_label.end(), lower_label.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string& engine = group.trace.meta.engine;
  if (!engine.empty() && engine != "eval" && lower_label.find(engine) == std::string::npos) {
    title += fmt::format(" [{}]", group.trace.meta.engine);
  }
  title += fmt::format("   span {:.4g} {}   bubble {:.1f}%   peak mem {}", m.span, unit, percent(m.bubble_rate),
                       format_amount(peak));
  return title;
}

TimelineLayout layout_timeline(const TimelineScene& scene, const Viewport& viewport, double width_px,
                               const LayoutStyle& style) {
  TimelineLayout out;
  out.width_px = width_px;
  out.plot.x = style.label_width_px;
  out.plot.w = plot_width(width_px, style);
  out.plot.y = style.axis_height_px;

  out.ticks = axis_ticks(viewport, out.plot.w, style.min_tick_spacing_px, scene.time_unit());
  for (Tick& tick : out.ticks) tick.x_px += out.plot.x;

  double y = style.axis_height_px;
  const auto& groups = scene.groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const TraceGroup& group = groups[g];
    const int gi = static_cast<int>(g);
    out.headers.push_back({{0, y, width_px, style.group_header_px}, gi, group_title(group)});
    y += style.group_header_px;

    std::vector<double> row_top(static_cast<std::size_t>(group.devices()));
    for (int d = 0; d < group.devices(); ++d) {
      const RectPx lane{out.plot.x, y, out.plot.w, style.row_height_px};
      row_top[static_cast<std::size_t>(d)] = y;
      out.rows.push_back({lane, gi, d, fmt::format("d{}", d)});

      for (const Interval& gap : group.idle[static_cast<std::size_t>(d)]) {
        double x0 = out.plot.x + viewport.x_of(gap.start);
        double x1 = out.plot.x + viewport.x_of(gap.end);
        if (clip(x0, x1, out.plot)) out.bubbles.push_back({{x0, y, x1 - x0, style.row_height_px}, gi, d});
      }
      const std::vector<int>& spans = group.device_spans[static_cast<std::size_t>(d)];
      for (std::size_t k = 0; k < spans.size(); ++k) {
        const int index = spans[k];
        const Span& span = group.trace.spans[static_cast<std::size_t>(index)];
        const bool first_of_pair = span.overlap_next && k + 1 < spans.size();
        const bool in_pair = first_of_pair || (k > 0 && group.trace.spans[static_cast<std::size_t>(spans[k - 1])].overlap_next);
        if (first_of_pair) {
          double p0 = out.plot.x + viewport.x_of(span.start);
          double p1 = out.plot.x + viewport.x_of(group.trace.spans[static_cast<std::size_t>(spans[k + 1])].end);
          if (clip(p0, p1, out.plot)) out.pairs.push_back({p0, y, p1 - p0, style.row_height_px});
        }
        double x0 = out.plot.x + viewport.x_of(span.start);
        double x1 = out.plot.x + viewport.x_of(span.end);
        if (!clip(x0, x1, out.plot)) continue;
        BoxItem box;
        box.in_pair = in_pair;
        box.rect = {x0, y, x1 - x0, style.row_height_px};
        box.colour = pass_colour(span.pass, span.chunk);
        box.group = gi;
        box.span = index;
        box.label = std::to_string(span.microbatch);
        box.show_label = box.rect.w >= style.char_width_px * static_cast<double>(box.label.size()) + 4;
        out.boxes.push_back(std::move(box));
      }
      y += style.row_height_px + style.row_gap_px;
    }

    if (style.show_arrows) {
      for (const CommArrow& arrow : group.arrows) {
        const Span& from = group.trace.spans[static_cast<std::size_t>(arrow.from_span)];
        const Span& to = group.trace.spans[static_cast<std::size_t>(arrow.to_span)];
        const double x0 = out.plot.x + viewport.x_of(from.end);
        const double x1 = out.plot.x + viewport.x_of(to.start);
        if (std::max(x0, x1) < out.plot.x || std::min(x0, x1) > out.plot.right()) continue;
        const double half = style.row_height_px / 2;
        out.arrows.push_back({{x0, row_top[static_cast<std::size_t>(from.device)] + half},
                              {x1, row_top[static_cast<std::size_t>(to.device)] + half},
                              gi});
      }
    }

    if (style.show_memory && !group.trace.memory.empty()) {
      const RectPx rect{out.plot.x, y, out.plot.w, style.memory_height_px};
      out.memory.push_back(memory_chart(group, gi, viewport, rect, out.plot));
      y += style.memory_height_px + style.row_gap_px;
    }
    y += style.group_gap_px;
  }
  out.height_px = y;
  out.plot.h = y - out.plot.y;
  return out;
}

const BoxItem* hit_test(const TimelineLayout& layout, double x_px, double y_px) {
  for (auto it = layout.boxes.rbegin(); it != layout.boxes.rend(); ++it) {
    if (it->rect.contains(x_px, y_px)) return &*it;
  }
  return nullptr;
}

}  // namespace zb::view
