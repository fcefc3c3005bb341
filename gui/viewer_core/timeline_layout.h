// Pixel geometry of the timeline for a scene, a viewport and a width: boxes, copy bars, bubbles,
// rows, group headers, memory charts, arrows, axis ticks and the legend. Widgets only paint these
// lists; tests check them.
#pragma once

#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "gui/viewer_core/pass_colours.h"
#include "gui/viewer_core/time_axis.h"
#include "gui/viewer_core/timeline_scene.h"
#include "gui/viewer_core/viewport.h"

namespace zb::view {

struct PointPx {
  double x = 0, y = 0;
};

struct RectPx {
  double x = 0, y = 0, w = 0, h = 0;

  double right() const { return x + w; }
  double bottom() const { return y + h; }
  bool contains(double px, double py) const { return px >= x && px < x + w && py >= y && py < y + h; }
};

struct LayoutStyle {
  double label_width_px = 84;     // device labels left of the plot
  double right_margin_px = 12;
  double axis_height_px = 40;     // legend and time axis above the first group (includes the legend)
  double group_header_px = 20;    // title line of each group (label and metrics)
  double row_height_px = 18;
  double row_gap_px = 3;
  // A group with copies has a strip under each device row, a pixel below it: the offload bar above
  // the reload bar, as in the SVG writer (the two copy engines run at once).
  double copy_bar_px = 4;
  double memory_height_px = 46;   // memory chart under each group's device rows (lines)
  double memory_band_px = 4;      // strip mode: the height of one device's band
  double small_text_px = 11;      // height of a chart label line (ticks, key, caption)
  double group_gap_px = 10;
  double min_tick_spacing_px = 70;
  double char_width_px = 6.5;     // average glyph width for "does the label fit" decisions
  bool show_memory = true;
  bool show_arrows = false;
};

// A compute span's box, or a copy span's bar (no label, not in a pair).
struct BoxItem {
  RectPx rect;
  Rgb colour;
  int group = 0;
  int span = 0;            // index into the group's Trace::spans
  std::string label;       // microbatch number
  bool show_label = false; // only when it fits inside the box
  bool in_pair = false;    // a part of an overlapped pair: no frame of its own (see TimelineLayout::pairs)
};

struct BubbleItem {
  RectPx rect;
  int group = 0;
  int device = 0;
};

struct RowItem {
  RectPx lane;  // the plot area of this device row
  int group = 0;
  int device = 0;
  std::string label;  // "d0"
};

struct GroupHeaderItem {
  RectPx rect;
  int group = 0;
  std::string text;  // label, span, bubble rate, peak memory
};

// A line of text the layout placed: the painter draws `text` inside `rect` (left- or right-aligned)
// and never moves it, so that tests can check that no two labels overlap.
struct LabelItem {
  RectPx rect;
  std::string text;
  Rgb colour{0x55, 0x55, 0x55};
  bool align_right = false;
};

// One device's memory over an interval in the heat strip, coloured by its value.
struct HeatCell {
  RectPx rect;
  Rgb colour;
};

// The activation memory of a group under its device rows. Up to kMaxMemoryLines devices: a step
// line per device, a value axis with ticks and the unit, a colour key. More devices: a heat strip,
// a band per device (darker = more memory, the limit's colour above the limit), device names at
// the left, and a colour scale with its ticks and unit. Every label lies in `labels`; none overlaps
// another (layout_timeline drops the ones that would).
struct MemoryChartItem {
  RectPx rect;
  int group = 0;
  double max_value = 0;                           // the value at the chart's top edge (strip: the darkest)
  std::string unit;                               // "M_B", "GB", "bytes"
  std::vector<std::vector<PointPx>> device_lines;  // line mode: step polylines, one per device
  std::optional<double> limit_y;                  // line mode: the memory limit line, when inside the chart
  bool strip = false;                             // heat strip mode
  std::vector<HeatCell> cells;                    // strip mode
  std::vector<RectPx> device_bands;               // strip mode: the band of device d
  RectPx scale;                                   // strip mode: the colour scale swatch (on the caption line)
  std::string caption;
  std::vector<LabelItem> labels;                  // caption, axis ticks, key or device names, scale ticks
};

// Devices drawn as lines at most (the line colours cycle after that many).
inline constexpr int kMaxMemoryLines = 9;

// A legend swatch: the painter lays the entries out in a line at the top right.
struct LegendEntry {
  std::string text;
  Rgb colour;
};

struct ArrowItem {
  PointPx from, to;
  int group = 0;
};

struct TimelineLayout {
  double width_px = 0;
  double height_px = 0;
  RectPx plot;  // the horizontal extent of every lane: x and w; y and h cover all groups
  std::vector<Tick> ticks;  // x_px is absolute (plot.x already added)
  std::vector<GroupHeaderItem> headers;
  std::vector<RowItem> rows;
  std::vector<BubbleItem> bubbles;
  std::vector<BoxItem> boxes;
  std::vector<BoxItem> copy_bars;  // the copy spans in the strips under their rows; no labels
  std::vector<RectPx> pairs;  // one frame around both parts of each overlapped pair: one box, two colours
  std::vector<MemoryChartItem> memory;
  std::vector<ArrowItem> arrows;
  std::vector<LegendEntry> legend;
};

// The passes (O offload and L reload only when a group has copies), the chunk shading, idle.
std::vector<LegendEntry> legend_entries(const TimelineScene& scene);

// The heat strip's colour for a value: pale to dark blue over [0, max_value]; over the limit, the
// limit's colour.
Rgb memory_heat_colour(double value, double max_value, std::optional<double> limit);

// The memory value of device `device` at time `time` in a group (the step function's value).
double memory_at(const TraceGroup& group, int device, double time);

// The device and time under a point of a memory chart, if the point is on a device's band or line
// area (for the hover readout: "d7 at 12.5 ms: 6 M_B").
struct MemoryHit {
  int group = 0;
  int device = 0;  // strip: the band under the point; lines: the device whose value is nearest
  double time = 0;
  double value = 0;
};
std::optional<MemoryHit> hit_test_memory(const TimelineLayout& layout, const TimelineScene& scene,
                                         const Viewport& viewport, double x_px, double y_px);
std::string describe_memory(const TraceGroup& group, const MemoryHit& hit);

// Lays out every group top to bottom. Items entirely outside the plot's time range are dropped and
// the rest are clipped to it, so the painter never draws outside the plot.
TimelineLayout layout_timeline(const TimelineScene& scene, const Viewport& viewport, double width_px,
                               const LayoutStyle& style = {});

// The plot width for a widget width (where the viewport's pixels live).
double plot_width(double width_px, const LayoutStyle& style);

// The total height the layout needs (to size a scroll area) without laying out boxes.
double layout_height(const TimelineScene& scene, const LayoutStyle& style);

// The box or copy bar under a point, if any (the last drawn wins, as on screen).
const BoxItem* hit_test(const TimelineLayout& layout, double x_px, double y_px);

// A fraction as a percentage for display, with rounding noise around zero shown as 0.
double percent(double fraction);

// A memory amount with an SI suffix when large (memory units differ: M_B, GB, bytes): 4, 7.5,
// 2.62M, 1.31k.
std::string format_amount(double value);

// The group header line: "zb-h1  span 27 ms  bubble 11.1%  peak mem 4".
std::string group_title(const TraceGroup& group);

}  // namespace zb::view
