// Pixel geometry of the timeline (see timeline_layout.h).
#include "gui/viewer_core/timeline_layout.h"

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

// A trace that recorded no memory (a torch.profiler run) gets no chart, not an empty one.
bool shows_memory(const TraceGroup& group, const LayoutStyle& style) {
  return style.show_memory && has_memory(group.trace);
}

double memory_chart_height(const TraceGroup& group, const LayoutStyle& style) {
  if (group.devices() <= kMaxMemoryLines) return style.memory_height_px;
  return std::max(style.memory_height_px, style.small_text_px + 3 + group.devices() * style.memory_band_px);
}

// Offload bar, reload bar and the pixel that parts them from the row; nothing without copies.
double copy_strip_height(const TraceGroup& group, const LayoutStyle& style) {
  return group.has_copies() ? 2 * style.copy_bar_px + 1 : 0;
}

double group_height(const TraceGroup& group, const LayoutStyle& style) {
  double h = style.group_header_px +
             group.devices() * (style.row_height_px + copy_strip_height(group, style) + style.row_gap_px);
  if (shows_memory(group, style)) h += memory_chart_height(group, style) + style.row_gap_px;
  return h;
}

bool overlaps(const RectPx& a, const RectPx& b) {
  return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom();
}

// Places the labels of one chart in priority order; one that would overlap a placed one is dropped.
class LabelPlacer {
 public:
  LabelPlacer(std::vector<LabelItem>& labels, const LayoutStyle& style) : labels_(labels), style_(style) {}

  // The width a label needs (a generous glyph width, so that real text stays inside its rect).
  double width(const std::string& text) const { return style_.char_width_px * static_cast<double>(text.size()) + 2; }

  bool fits(const RectPx& rect) const {
    return std::none_of(labels_.begin(), labels_.end(), [&](const LabelItem& placed) { return overlaps(placed.rect, rect); });
  }

  bool place(LabelItem label) {
    if (!fits(label.rect)) return false;
    labels_.push_back(std::move(label));
    return true;
  }

  // A label whose left (or, right-aligned, right) edge is at x, vertically centred on y but kept
  // inside [top, bottom].
  bool place_at(std::string text, double x, double y, double top, double bottom, bool align_right, Rgb colour) {
    const double w = width(text), h = style_.small_text_px;
    const double y0 = std::clamp(y - h / 2, top, std::max(top, bottom - h));
    return place({{align_right ? x - w : x, y0, w, h}, std::move(text), colour, align_right});
  }

 private:
  std::vector<LabelItem>& labels_;
  const LayoutStyle& style_;
};

constexpr Rgb kLabelColour{0x55, 0x55, 0x55};

MemoryChartItem memory_chart(const TraceGroup& group, int group_index, const Viewport& viewport,
                             const RectPx& rect, const RectPx& plot, const LayoutStyle& style) {
  MemoryChartItem chart;
  chart.rect = rect;
  chart.group = group_index;
  chart.unit = group.memory_unit;
  chart.strip = group.devices() > kMaxMemoryLines;
  // A limit far above the peak (device memory of a big GPU) would flatten the lines to the floor:
  // then the chart scales to the peak and the caption gives the limit.
  const bool limit_in_scale = group.memory_limit && *group.memory_limit <= 2 * group.memory_peak;
  double top = std::max(group.memory_peak, limit_in_scale ? *group.memory_limit : 0.0);
  if (!(top > 0)) top = 1;
  // Lines get headroom so the peak and the limit are not on the frame; the strip's darkest is the top.
  chart.max_value = chart.strip ? top : top * 1.1;
  auto x_of = [&](double time) { return std::clamp(plot.x + viewport.x_of(time), plot.x, plot.right()); };
  const std::string limit_text =
      group.memory_limit ? fmt::format(", limit {}{}", format_amount(*group.memory_limit),
                                       limit_in_scale || chart.strip ? "" : ", above the chart")
                         : std::string();
  chart.caption = fmt::format("memory, {} (peak {}{})", chart.unit, format_amount(group.memory_peak), limit_text);

  LabelPlacer placer(chart.labels, style);
  const double text_h = style.small_text_px;
  const double left_column = rect.x - 6;  // labels left of the chart end here
  placer.place({{rect.x + 4, rect.y + 1, placer.width(chart.caption), text_h}, chart.caption, kLabelColour, false});
  const double caption_right = rect.x + 4 + placer.width(chart.caption);

  if (!chart.strip) {
    auto y_of = [&](double value) { return rect.bottom() - value / chart.max_value * rect.h; };
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
    // The value axis: round steps at least a label line apart, the highest with the unit.
    const double step = nice_step(chart.max_value * (text_h + 2) / rect.h);
    std::vector<double> values;
    for (double k = 0; k * step <= chart.max_value * (1 + 1e-12); k += 1) values.push_back(k * step);
    for (auto it = values.rbegin(); it != values.rend(); ++it) {
      std::string text = format_tick(*it, step);
      if (it == values.rbegin()) text += " " + chart.unit;
      placer.place_at(std::move(text), left_column, y_of(*it), rect.y, rect.bottom(), true, kLabelColour);
    }
    // The colour key on the caption line, whole or not at all (a partial key would mislead).
    double key_width = 0;
    for (int d = 0; d < group.devices(); ++d) key_width += placer.width(fmt::format("d{}", d)) + 4;
    if (rect.right() - 4 - key_width >= caption_right + 8) {
      double x = rect.right() - 4 - key_width;
      for (int d = 0; d < group.devices(); ++d) {
        std::string key = fmt::format("d{}", d);
        const double w = placer.width(key);
        placer.place({{x, rect.y + 1, w, text_h}, std::move(key), device_line_colour(d), false});
        x += w + 4;
      }
    }
    return chart;
  }

  // The heat strip: a band per device under the caption line.
  const double band = style.memory_band_px;
  const double bands_top = rect.y + text_h + 3;
  for (int d = 0; d < group.devices(); ++d) {
    const RectPx band_rect{rect.x, bands_top + d * band, rect.w, band};
    chart.device_bands.push_back(band_rect);
    if (static_cast<std::size_t>(d) >= group.trace.memory.size()) continue;
    double value = 0, since = 0;
    double pixel_peak = -1;  // the largest value merged into the band's last cell while it is under a pixel wide
    const std::size_t first_cell = chart.cells.size();
    auto add_cell = [&](double until) {
      double x0 = plot.x + viewport.x_of(since), x1 = plot.x + viewport.x_of(until);
      if (!clip(x0, x1, plot)) return;
      // Intervals thinner than a pixel (large m zoomed out) merge into one cell of their peak: the
      // strip stays about a cell per pixel and never hides a peak.
      if (chart.cells.size() > first_cell && chart.cells.back().rect.w < 1) {
        HeatCell& last = chart.cells.back();
        pixel_peak = std::max(pixel_peak, value);
        last.rect.w = x1 - last.rect.x;
        last.colour = memory_heat_colour(pixel_peak, chart.max_value, group.memory_limit);
        return;
      }
      pixel_peak = value;
      chart.cells.push_back({{x0, band_rect.y, x1 - x0, band}, memory_heat_colour(value, chart.max_value, group.memory_limit)});
    };
    for (const MemoryPoint& point : group.trace.memory[static_cast<std::size_t>(d)]) {
      if (point.time > since) add_cell(point.time);
      since = std::max(since, point.time);
      value = point.value;
    }
    if (group.end_time > since) add_cell(group.end_time);
  }
  // Device names left of the bands: every k-th, k so that names are a label line apart.
  const int every = std::max(1, static_cast<int>(std::ceil((text_h + 1) / band)));
  for (int d = 0; d < group.devices(); d += every) {
    // Bounded by the chart, not the bands: the first name may reach up beside the caption line.
    placer.place_at(fmt::format("d{}", d), left_column, bands_top + (d + 0.5) * band, rect.y, rect.bottom(), true,
                    kLabelColour);
  }
  // The colour scale on the caption line: "0 [pale .. dark] top unit".
  const std::string low = "0", high = format_amount(chart.max_value) + " " + chart.unit;
  constexpr double kScaleWidth = 100;
  const double high_w = placer.width(high), low_w = placer.width(low);
  const double scale_x = rect.right() - 4 - high_w - 4 - kScaleWidth;
  if (scale_x - 4 - low_w >= caption_right + 8) {
    chart.scale = {scale_x, rect.y + 2, kScaleWidth, text_h - 3};
    placer.place({{scale_x - 4 - low_w, rect.y + 1, low_w, text_h}, low, kLabelColour, true});
    placer.place({{scale_x + kScaleWidth + 4, rect.y + 1, high_w, text_h}, high, kLabelColour, false});
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

std::vector<LegendEntry> legend_entries(const TimelineScene& scene) {
  std::vector<LegendEntry> entries{{"F", pass_colour(Pass::F)}, {"B", pass_colour(Pass::B)},
                                   {"W", pass_colour(Pass::W)}, {"BW", pass_colour(Pass::BW)}};
  const auto& groups = scene.groups();
  if (std::any_of(groups.begin(), groups.end(), [](const TraceGroup& group) { return group.has_copies(); })) {
    entries.push_back({"O offload", pass_colour(Pass::O)});
    entries.push_back({"L reload", pass_colour(Pass::L)});
  }
  entries.push_back({"chunk 1", pass_colour(Pass::F, 1)});
  entries.push_back({"idle", bubble_colour()});
  return entries;
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
  title += fmt::format("   span {:.4g} {}   bubble {:.1f}%", m.span, unit, percent(m.bubble_rate));
  if (has_memory(group.trace)) title += fmt::format("   peak mem {} {}", format_amount(peak), group.memory_unit);
  return title;
}

TimelineLayout layout_timeline(const TimelineScene& scene, const Viewport& viewport, double width_px,
                               const LayoutStyle& style) {
  TimelineLayout out;
  out.width_px = width_px;
  out.plot.x = style.label_width_px;
  out.plot.w = plot_width(width_px, style);
  out.plot.y = style.axis_height_px;
  out.legend = legend_entries(scene);

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
      for (const int index : group.device_copies[static_cast<std::size_t>(d)]) {
        const Span& span = group.trace.spans[static_cast<std::size_t>(index)];
        double x0 = out.plot.x + viewport.x_of(span.start);
        double x1 = out.plot.x + viewport.x_of(span.end);
        if (!clip(x0, x1, out.plot)) continue;
        const double bar_y = y + style.row_height_px + 1 + (span.pass == Pass::O ? 0 : style.copy_bar_px);
        BoxItem bar;
        bar.rect = {x0, bar_y, x1 - x0, style.copy_bar_px};
        bar.colour = pass_colour(span.pass, span.chunk);
        bar.group = gi;
        bar.span = index;
        out.copy_bars.push_back(std::move(bar));
      }
      y += style.row_height_px + copy_strip_height(group, style) + style.row_gap_px;
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

    if (shows_memory(group, style)) {
      const RectPx rect{out.plot.x, y, out.plot.w, memory_chart_height(group, style)};
      out.memory.push_back(memory_chart(group, gi, viewport, rect, out.plot, style));
      y += rect.h + style.row_gap_px;
    }
    y += style.group_gap_px;
  }
  out.height_px = y;
  out.plot.h = y - out.plot.y;
  return out;
}

const BoxItem* hit_test(const TimelineLayout& layout, double x_px, double y_px) {
  for (const auto* items : {&layout.copy_bars, &layout.boxes}) {
    for (auto it = items->rbegin(); it != items->rend(); ++it) {
      if (it->rect.contains(x_px, y_px)) return &*it;
    }
  }
  return nullptr;
}

}  // namespace zb::view

namespace zb::view {

Rgb memory_heat_colour(double value, double max_value, std::optional<double> limit) {
  if (limit && value > *limit * (1 + 1e-12)) return limit_colour();
  const double f = max_value > 0 ? std::clamp(value / max_value, 0.0, 1.0) : 0.0;
  // Pale to dark blue (ColorBrewer's Blues ends): light enough at 0 to read as "nothing live".
  constexpr Rgb kLow{0xF0, 0xF4, 0xFA}, kHigh{0x08, 0x30, 0x6B};
  auto mix = [f](std::uint8_t a, std::uint8_t b) { return static_cast<std::uint8_t>(std::lround(a + (b - a) * f)); };
  return {mix(kLow.r, kHigh.r), mix(kLow.g, kHigh.g), mix(kLow.b, kHigh.b)};
}

double memory_at(const TraceGroup& group, int device, double time) {
  if (device < 0 || static_cast<std::size_t>(device) >= group.trace.memory.size()) return 0;
  double value = 0;
  for (const MemoryPoint& point : group.trace.memory[static_cast<std::size_t>(device)]) {
    if (point.time > time) break;
    value = point.value;
  }
  return value;
}

std::optional<MemoryHit> hit_test_memory(const TimelineLayout& layout, const TimelineScene& scene,
                                         const Viewport& viewport, double x_px, double y_px) {
  for (const MemoryChartItem& chart : layout.memory) {
    if (!chart.rect.contains(x_px, y_px)) continue;
    const TraceGroup& group = scene.groups().at(static_cast<std::size_t>(chart.group));
    MemoryHit hit;
    hit.group = chart.group;
    hit.time = viewport.time_of(x_px - layout.plot.x);
    if (chart.strip) {
      auto band = std::find_if(chart.device_bands.begin(), chart.device_bands.end(),
                               [&](const RectPx& r) { return r.contains(x_px, y_px); });
      if (band == chart.device_bands.end()) return std::nullopt;
      hit.device = static_cast<int>(band - chart.device_bands.begin());
    } else {
      // The device whose line is nearest to the point at that time.
      double best = 0;
      for (int d = 0; d < group.devices(); ++d) {
        const double y = chart.rect.bottom() - memory_at(group, d, hit.time) / chart.max_value * chart.rect.h;
        if (d == 0 || std::abs(y - y_px) < best) {
          best = std::abs(y - y_px);
          hit.device = d;
        }
      }
    }
    hit.value = memory_at(group, hit.device, hit.time);
    return hit;
  }
  return std::nullopt;
}

std::string describe_memory(const TraceGroup& group, const MemoryHit& hit) {
  return fmt::format("{}: d{} at {:.6g} {}: {} {} live", group.label, hit.device, hit.time,
                     time_unit_name(group.trace.meta.time_unit), format_amount(hit.value), group.memory_unit);
}

}  // namespace zb::view
