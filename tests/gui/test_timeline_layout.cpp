// The timeline model: groups, bubbles, arrows, layout geometry, colours and hit-testing.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "tests/gui/gui_test_support.h"
#include "sim/formats/pass_colors.h"
#include "sim/formats/trace_writers.h"
#include "gui/viewer_core/pass_colours.h"
#include "gui/viewer_core/timeline_layout.h"
#include "gui/viewer_core/timeline_scene.h"

namespace zb::view {
namespace {

using testing::compute_span;
using testing::copy_span;
using testing::evaluated;
using testing::offload_spec;
using testing::tiny_trace;
using testing::uniform_spec;

TEST(Gaps, AreTheComplementOfBusyTimeInsideZeroToEnd) {
  const auto gaps = gaps_between({{1, 2}, {2, 3}, {5, 7}, {6, 6.5}}, 10, 1e-9);
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_DOUBLE_EQ(gaps[0].start, 0);
  EXPECT_DOUBLE_EQ(gaps[0].end, 1);
  EXPECT_DOUBLE_EQ(gaps[1].start, 3);
  EXPECT_DOUBLE_EQ(gaps[1].end, 5);
  EXPECT_DOUBLE_EQ(gaps[2].start, 7);  // the nested span [6, 6.5] must not pull the cursor back
  EXPECT_DOUBLE_EQ(gaps[2].end, 10);
  EXPECT_TRUE(gaps_between({{0, 4}}, 4, 1e-9).empty());
  EXPECT_TRUE(gaps_between({{0, 1}, {1 + 1e-12, 2}}, 2, 1e-9).empty());  // noise is not a bubble
}

TEST(Scene, GroupsSortSpansPerDeviceAndFindTheBubbles) {
  const TraceGroup group = make_group("tiny", tiny_trace(), std::nullopt);
  ASSERT_EQ(group.devices(), 2);
  EXPECT_EQ(group.device_spans[0], (std::vector<int>{0, 3}));
  EXPECT_EQ(group.device_spans[1], (std::vector<int>{1, 2}));
  EXPECT_DOUBLE_EQ(group.end_time, 6);
  ASSERT_EQ(group.idle[0].size(), 1u);  // d0 idle in [1, 4]
  EXPECT_DOUBLE_EQ(group.idle[0][0].start, 1);
  EXPECT_DOUBLE_EQ(group.idle[0][0].end, 4);
  ASSERT_EQ(group.idle[1].size(), 2u);  // d1 idle in [0, 1] and [4, 6]
  EXPECT_DOUBLE_EQ(group.idle[1][1].start, 4);
  EXPECT_DOUBLE_EQ(group.memory_peak, 1);
  // F0 d0 -> F0 d1, and BW0 d1 -> BW0 d0.
  ASSERT_EQ(group.arrows.size(), 2u);
  EXPECT_EQ(group.arrows[0].from_span, 0);
  EXPECT_EQ(group.arrows[0].to_span, 1);
  EXPECT_EQ(group.arrows[1].from_span, 2);
  EXPECT_EQ(group.arrows[1].to_span, 3);
}

// DualPipeV's overlapped pairs: each pair is one frame around its two part boxes (which have no
// frame of their own), exactly as many frames as pairs.
TEST(Layout, OverlappedPairsAreOneFramedBoxInTwoColours) {
  ProblemSpec spec = uniform_spec(4, 10, 1, 1, 1, 0, 2);
  spec.placement = Placement::vshape;
  const Trace trace = evaluated("dualpipe-v", spec);
  TimelineScene scene;
  scene.add(make_group("dualpipe-v", trace, std::nullopt));
  Viewport viewport;
  viewport.fit(0, scene.end_time(), plot_width(1200, {}));
  const TimelineLayout layout = layout_timeline(scene, viewport, 1200);
  ASSERT_EQ(layout.pairs.size(), 41u);  // the pairs of the PyTorch file (9 + 10 + 11 + 11)
  const auto parts = std::count_if(layout.boxes.begin(), layout.boxes.end(), [](const BoxItem& b) { return b.in_pair; });
  EXPECT_EQ(parts, 82);
  for (const BoxItem& box : layout.boxes) {
    const Span& span = trace.spans[static_cast<std::size_t>(box.span)];
    if (!span.overlap_next) continue;
    const Span& partner = trace.spans[static_cast<std::size_t>(box.span) + 1];
    EXPECT_NE(box.colour, pass_colour(partner.pass, partner.chunk));  // two colours
  }
}

TEST(Scene, BubblesOfAnEvaluatedScheduleAddUpToItsIdleTime) {
  for (const char* name : {"1f1b", "zb-h1", "zb-h2", "gpipe"}) {
    const Trace trace = evaluated(name, uniform_spec(4, 8, 1, 1, 1, 0.25));
    const TraceGroup group = make_group(name, trace, std::nullopt);
    ASSERT_EQ(group.devices(), 4) << name;
    EXPECT_NEAR(group.end_time, trace.metrics.makespan, 1e-9) << name;
    for (int d = 0; d < 4; ++d) {
      double idle = 0;
      for (const Interval& gap : group.idle[static_cast<std::size_t>(d)]) idle += gap.length();
      EXPECT_NEAR(idle, trace.metrics.idle[static_cast<std::size_t>(d)], 1e-9) << name << " d" << d;
    }
  }
}

TEST(Scene, TheInterleavedScheduleHasArrowsAcrossTheLoopBoundary) {
  ProblemSpec spec = uniform_spec(2, 4);
  spec.chunks = 2;
  const Trace trace = evaluated("1f1b-i", spec);
  const TraceGroup group = make_group("1f1b-i", trace, std::nullopt);
  // 4 stages on 2 devices, every boundary crosses devices: 3 forward and 3 backward hops per microbatch.
  EXPECT_EQ(group.arrows.size(), 4u * 6u);
}

TEST(Layout, LaysOutOneBoxPerComputeSpanAtItsTime) {
  TimelineScene scene;
  const Trace trace = evaluated("zb-h1", uniform_spec(4, 8));
  scene.add(make_group("zb-h1", trace, std::nullopt));
  Viewport viewport;
  const LayoutStyle style;
  viewport.fit(0, scene.end_time(), plot_width(1200, style));
  const TimelineLayout layout = layout_timeline(scene, viewport, 1200, style);

  const auto compute = std::count_if(trace.spans.begin(), trace.spans.end(),
                                     [](const Span& s) { return s.stream == Stream::compute; });
  ASSERT_EQ(compute, 4 * 8 * 3);
  ASSERT_EQ(static_cast<long>(layout.boxes.size()), compute);
  ASSERT_EQ(layout.rows.size(), 4u);
  for (const BoxItem& box : layout.boxes) {
    const Span& span = trace.spans[static_cast<std::size_t>(box.span)];
    EXPECT_NEAR(box.rect.x, layout.plot.x + viewport.x_of(span.start), 1e-9);
    EXPECT_NEAR(box.rect.w, span.duration() * viewport.px_per_time(), 1e-9);
    const RowItem& row = layout.rows[static_cast<std::size_t>(span.device)];
    EXPECT_EQ(row.device, span.device);
    EXPECT_DOUBLE_EQ(box.rect.y, row.lane.y);
    EXPECT_EQ(box.colour, pass_colour(span.pass, span.chunk));
    EXPECT_EQ(box.label, std::to_string(span.microbatch));
  }
  // Header, then rows top to bottom, then the memory chart.
  EXPECT_LT(layout.headers[0].rect.y, layout.rows[0].lane.y);
  for (std::size_t d = 1; d < 4; ++d) EXPECT_GT(layout.rows[d].lane.y, layout.rows[d - 1].lane.bottom() - 1e-9);
  ASSERT_EQ(layout.memory.size(), 1u);
  EXPECT_GT(layout.memory[0].rect.y, layout.rows[3].lane.y);
  EXPECT_NEAR(layout.height_px, layout_height(scene, style), 1e-9);
}

TEST(Layout, StacksSeveralSchedulesOnOneTimeAxis) {
  TimelineScene scene;
  for (const char* name : {"1f1b", "zb-h1", "zb-h2"}) scene.add(make_group(name, evaluated(name, uniform_spec(4, 8)), std::nullopt));
  // The closed forms at unit costs, p = 4, m = 8: spans 33, 27, 24 (docs/design.md section 4).
  EXPECT_DOUBLE_EQ(scene.groups()[0].trace.metrics.span, 33);
  EXPECT_DOUBLE_EQ(scene.groups()[1].trace.metrics.span, 27);
  EXPECT_DOUBLE_EQ(scene.groups()[2].trace.metrics.span, 24);
  EXPECT_EQ(scene.row_count(), 12);
  Viewport viewport;
  viewport.fit(0, scene.end_time(), plot_width(1000, {}));
  const TimelineLayout layout = layout_timeline(scene, viewport, 1000);
  ASSERT_EQ(layout.headers.size(), 3u);
  ASSERT_EQ(layout.rows.size(), 12u);
  EXPECT_NE(layout.headers[1].text.find("zb-h1"), std::string::npos);
  EXPECT_NE(layout.headers[1].text.find("span 27"), std::string::npos);
  // The same time maps to the same x in every group: the last box of zb-h2 ends at 24 on the axis.
  double end_zb_h2 = 0, end_1f1b = 0;
  for (const BoxItem& box : layout.boxes) {
    if (box.group == 2) end_zb_h2 = std::max(end_zb_h2, box.rect.right());
    if (box.group == 0) end_1f1b = std::max(end_1f1b, box.rect.right());
  }
  EXPECT_NEAR(end_zb_h2, layout.plot.x + viewport.x_of(scene.groups()[2].end_time), 1e-9);
  EXPECT_NEAR(end_1f1b, layout.plot.x + viewport.x_of(scene.groups()[0].end_time), 1e-9);
  EXPECT_LT(end_zb_h2, end_1f1b);
}

TEST(Layout, ClipsToThePlotWhenZoomedIn) {
  TimelineScene scene;
  scene.add(make_group("zb-h1", evaluated("zb-h1", uniform_spec(4, 8)), std::nullopt));
  Viewport viewport(10, 100);  // 100 px per unit from t = 10: shows about t in [10, 20] on 1000 px
  const TimelineLayout layout = layout_timeline(scene, viewport, 1000);
  ASSERT_FALSE(layout.boxes.empty());
  EXPECT_LT(layout.boxes.size(), 96u);
  for (const BoxItem& box : layout.boxes) {
    EXPECT_GE(box.rect.x, layout.plot.x - 1e-9);
    EXPECT_LE(box.rect.right(), layout.plot.right() + 1e-9);
    if (box.rect.w > 90) {
      EXPECT_TRUE(box.show_label);  // 100 px per unit: numbers fit unless clipped
    }
  }
  for (const BubbleItem& bubble : layout.bubbles) {
    EXPECT_GE(bubble.rect.x, layout.plot.x - 1e-9);
    EXPECT_LE(bubble.rect.right(), layout.plot.right() + 1e-9);
  }
  // Zoomed far out, the numbers do not fit and are hidden.
  const TimelineLayout far = layout_timeline(scene, Viewport(0, 0.5), 1000);
  for (const BoxItem& box : far.boxes) EXPECT_FALSE(box.show_label);
}

TEST(Layout, HitTestFindsTheBoxUnderThePointAndNothingInABubble) {
  TimelineScene scene;
  scene.add(make_group("tiny", tiny_trace(), std::nullopt));
  Viewport viewport(0, 100);
  const TimelineLayout layout = layout_timeline(scene, viewport, 1000);
  const double y0 = layout.rows[0].lane.y + 5;
  const double y1 = layout.rows[1].lane.y + 5;
  const BoxItem* hit = hit_test(layout, layout.plot.x + 50, y0);  // t = 0.5 on d0: F0
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->span, 0);
  hit = hit_test(layout, layout.plot.x + 300, y1);  // t = 3 on d1: BW0
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->span, 2);
  EXPECT_EQ(hit_test(layout, layout.plot.x + 250, y0), nullptr);  // d0 idle in [1, 4]
  EXPECT_EQ(hit_test(layout, 10, y0), nullptr);                  // the label column
  const std::string tip = describe_span(scene.groups()[0], 2);
  EXPECT_NE(tip.find("BW0"), std::string::npos);
  EXPECT_NE(tip.find("device 1"), std::string::npos);
  EXPECT_NE(tip.find("start 2 ms, end 4 ms, duration 2 ms"), std::string::npos);
}

TEST(Layout, BubblesCoverExactlyTheGaps) {
  TimelineScene scene;
  scene.add(make_group("tiny", tiny_trace(), std::nullopt));
  const TimelineLayout layout = layout_timeline(scene, Viewport(0, 100), 1000);
  ASSERT_EQ(layout.bubbles.size(), 3u);
  const BubbleItem& d0 = layout.bubbles[0];
  EXPECT_EQ(d0.device, 0);
  EXPECT_NEAR(d0.rect.x, layout.plot.x + 100, 1e-9);
  EXPECT_NEAR(d0.rect.w, 300, 1e-9);
}

TEST(Layout, ArrowsOnlyWhenAsked) {
  TimelineScene scene;
  scene.add(make_group("tiny", tiny_trace(), std::nullopt));
  LayoutStyle style;
  EXPECT_TRUE(layout_timeline(scene, Viewport(0, 100), 1000, style).arrows.empty());
  style.show_arrows = true;
  const TimelineLayout layout = layout_timeline(scene, Viewport(0, 100), 1000, style);
  ASSERT_EQ(layout.arrows.size(), 2u);
  // F0 ends on d0 at t = 1 and F0 starts on d1 at t = 1: a vertical arrow down one row.
  EXPECT_NEAR(layout.arrows[0].from.x, layout.plot.x + 100, 1e-9);
  EXPECT_NEAR(layout.arrows[0].to.x, layout.plot.x + 100, 1e-9);
  EXPECT_LT(layout.arrows[0].from.y, layout.arrows[0].to.y);
}

TEST(Layout, MemoryChartHasALinePerDeviceAndTheLimit) {
  TimelineScene scene;
  const Trace trace = evaluated("zb-h2", uniform_spec(4, 8));
  scene.add(make_group("zb-h2", trace, 4.0));
  Viewport viewport;
  viewport.fit(0, scene.end_time(), plot_width(1000, {}));
  const TimelineLayout layout = layout_timeline(scene, viewport, 1000);
  ASSERT_EQ(layout.memory.size(), 1u);
  const MemoryChartItem& chart = layout.memory[0];
  EXPECT_EQ(chart.device_lines.size(), 4u);
  ASSERT_TRUE(chart.limit_y.has_value());
  EXPECT_GE(chart.max_value, scene.groups()[0].memory_peak);
  EXPECT_GT(*chart.limit_y, chart.rect.y);
  EXPECT_LT(*chart.limit_y, chart.rect.bottom());
  // ZB-H2 keeps more than 4 M_B live on device 0 (2p-1 = 7 forwards in flight): its line rises above the limit.
  double top_y = chart.rect.bottom();
  for (const PointPx& point : chart.device_lines[0]) top_y = std::min(top_y, point.y);
  EXPECT_LT(top_y, *chart.limit_y);
  for (const auto& line : chart.device_lines) {
    for (const PointPx& point : line) {
      EXPECT_GE(point.y, chart.rect.y - 1e-9);
      EXPECT_LE(point.y, chart.rect.bottom() + 1e-9);
    }
  }
  LayoutStyle hidden;
  hidden.show_memory = false;
  EXPECT_TRUE(layout_timeline(scene, viewport, 1000, hidden).memory.empty());
}

TEST(Colours, PassColoursAreTheFixedOnes) {
  EXPECT_EQ(to_hex(pass_colour(Pass::F)), "#4c78a8");
  EXPECT_EQ(to_hex(pass_colour(Pass::B)), "#54a24b");
  EXPECT_EQ(to_hex(pass_colour(Pass::W)), "#f58518");
  EXPECT_EQ(to_hex(pass_colour(Pass::BW)), "#b279a2");
  EXPECT_EQ(to_hex(pass_colour(Pass::O)), "#72b7b2");
  EXPECT_EQ(to_hex(pass_colour(Pass::L)), "#9d755d");
  EXPECT_EQ(to_hex(pass_colour(Pass::F, 1)), "#9db5cf");  // 45% towards white
  EXPECT_NE(pass_colour(Pass::F, 1), pass_colour(Pass::F, 2));
  EXPECT_NE(bubble_colour(), background_colour());
  EXPECT_NE(bubble_colour(), lane_colour());
}

// The viewer and the SVG writer must agree on every pass and chunk shade.
TEST(Colours, MatchTheSvgWriter) {
  for (Pass pass : {Pass::F, Pass::B, Pass::W, Pass::BW, Pass::O, Pass::L}) {
    for (int chunk = 0; chunk < 3; ++chunk) {
      Trace trace;
      trace.devices = 1;
      // The copies as the SVG writer draws them: bars on the copy engine's strip.
      trace.spans = {(is_copy(pass) ? copy_span : compute_span)(0, pass, chunk, 0, 0, 1, chunk)};
      trace.metrics = compute_metrics(trace, 1);
      std::string svg = to_svg({{"x", &trace}});
      std::transform(svg.begin(), svg.end(), svg.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      const std::string hex = to_hex(pass_colour(pass, chunk));
      EXPECT_NE(svg.find("fill=\"" + hex + "\""), std::string::npos) << pass_name(pass) << " chunk " << chunk << " " << hex;
    }
  }
  std::string idle(idle_color());
  std::transform(idle.begin(), idle.end(), idle.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  EXPECT_EQ(to_hex(bubble_colour()), idle);
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

TEST(Layout, AMemoryLimitFarAboveThePeakDoesNotFlattenTheChart) {
  TimelineScene scene;
  scene.add(make_group("zb-h1", evaluated("zb-h1", uniform_spec(4, 8)), 100.0));  // peak 4
  const TimelineLayout layout = layout_timeline(scene, Viewport(0, 10), 800);
  ASSERT_EQ(layout.memory.size(), 1u);
  EXPECT_FALSE(layout.memory[0].limit_y.has_value());
  EXPECT_NEAR(layout.memory[0].max_value, 4 * 1.1, 1e-9);
  EXPECT_NE(layout.memory[0].caption.find("limit 100, above the chart"), std::string::npos) << layout.memory[0].caption;
  EXPECT_EQ(percent(-1e-9), 0.0);
  EXPECT_DOUBLE_EQ(percent(0.25), 25.0);
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

bool intersect(const RectPx& a, const RectPx& b) {
  return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom();
}

// Every label of every memory chart against every other label of the layout's charts.
void expect_no_label_overlaps(const TimelineLayout& layout) {
  std::vector<const LabelItem*> labels;
  for (const MemoryChartItem& chart : layout.memory) {
    for (const LabelItem& label : chart.labels) labels.push_back(&label);
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    EXPECT_GE(labels[i]->rect.x, 0) << labels[i]->text;
    EXPECT_LE(labels[i]->rect.right(), layout.width_px) << labels[i]->text;
    for (std::size_t j = i + 1; j < labels.size(); ++j) {
      EXPECT_FALSE(intersect(labels[i]->rect, labels[j]->rect)) << labels[i]->text << " / " << labels[j]->text;
    }
  }
}

std::vector<std::string> texts(const MemoryChartItem& chart) {
  std::vector<std::string> out;
  for (const LabelItem& label : chart.labels) out.push_back(label.text);
  return out;
}

TEST(MemoryChart, LinesHaveAValueAxisWithTheUnitAndAKey) {
  TimelineScene scene;
  scene.add(make_group("zb-h2", evaluated("zb-h2", uniform_spec(4, 8)), 4.0));
  for (double width : {1400.0, 300.0}) {
    Viewport viewport;
    viewport.fit(0, scene.end_time(), plot_width(width, {}));
    const TimelineLayout layout = layout_timeline(scene, viewport, width);
    const MemoryChartItem& chart = layout.memory.at(0);
    EXPECT_FALSE(chart.strip);
    expect_no_label_overlaps(layout);
    const auto all = texts(chart);
    // ZB-H2 peaks at 7 M_B, the chart's top is 7.7: round ticks at least a label line (13 px of
    // 46) apart are 0 and 5, the top one with the unit.
    EXPECT_NE(std::find(all.begin(), all.end(), "5 M_B"), all.end()) << ::testing::PrintToString(all);
    EXPECT_NE(std::find(all.begin(), all.end(), "0"), all.end());
    EXPECT_NE(all.front().find("memory, M_B (peak 7, limit 4)"), std::string::npos) << all.front();
    const bool has_key = std::find(all.begin(), all.end(), "d3") != all.end();
    EXPECT_EQ(has_key, width > 1000);  // too narrow for the whole key beside the caption: no key at all
  }
}

TEST(MemoryChart, ManyDevicesAreAHeatStripWhoseLabelsNeverCollide) {
  for (int p : {16, 32}) {
    TimelineScene scene;
    scene.add(make_group("zb-h1", evaluated("zb-h1", uniform_spec(p, 2 * p)), static_cast<double>(p)));
    scene.add(make_group("zb-h2", evaluated("zb-h2", uniform_spec(p, 2 * p)), static_cast<double>(p)));
    Viewport viewport;
    viewport.fit(0, scene.end_time(), plot_width(1400, {}));
    const TimelineLayout layout = layout_timeline(scene, viewport, 1400);
    ASSERT_EQ(layout.memory.size(), 2u);
    expect_no_label_overlaps(layout);
    const MemoryChartItem& chart = layout.memory[1];
    EXPECT_TRUE(chart.strip);
    EXPECT_TRUE(chart.device_lines.empty());
    ASSERT_EQ(chart.device_bands.size(), static_cast<std::size_t>(p));
    // Bands do not overlap each other, and the strip does not run into the next group.
    for (int d = 1; d < p; ++d) EXPECT_GE(chart.device_bands[d].y, chart.device_bands[d - 1].bottom() - 1e-9);
    EXPECT_LE(chart.device_bands.back().bottom(), chart.rect.bottom() + 1e-9);
    EXPECT_LT(layout.memory[0].rect.bottom(), layout.headers[1].rect.y);
    const auto all = texts(chart);
    EXPECT_NE(std::find(all.begin(), all.end(), "d0"), all.end());
    EXPECT_NE(std::find(all.begin(), all.end(), "d3"), all.end()) << ::testing::PrintToString(all);  // every third device at 4 px per band
    EXPECT_GT(chart.scale.w, 0);
    // ZB-H2 keeps 2p-1 forwards live on device 0: over the limit p, drawn in the limit's colour.
    const std::string top = format_amount(2.0 * p - 1) + " M_B";
    EXPECT_NE(std::find(all.begin(), all.end(), top), all.end()) << ::testing::PrintToString(all);
    EXPECT_TRUE(std::any_of(chart.cells.begin(), chart.cells.end(),
                            [](const HeatCell& cell) { return cell.colour == limit_colour(); }));

    // The hover readout: the band under the point names its device and value.
    const RectPx& band = chart.device_bands[5];
    const double x = band.x + band.w / 2;
    const auto hit = hit_test_memory(layout, scene, viewport, x, band.y + band.h / 2);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->group, 1);
    EXPECT_EQ(hit->device, 5);
    EXPECT_DOUBLE_EQ(hit->value, memory_at(scene.groups()[1], 5, viewport.time_of(x - layout.plot.x)));
    EXPECT_NE(describe_memory(scene.groups()[1], *hit).find("d5 at "), std::string::npos);
  }
}

TEST(MemoryChart, ATraceThatRecordedNoMemoryHasNoChart) {
  Trace profiled = tiny_trace();
  profiled.memory = {{}, {}};  // a torch.profiler run: a timeline per device, none with a point
  TimelineScene scene;
  scene.add(make_group("measured", profiled, std::nullopt));
  scene.add(make_group("tiny", tiny_trace(), std::nullopt));
  Viewport viewport;
  viewport.fit(0, scene.end_time(), plot_width(800, {}));
  const TimelineLayout layout = layout_timeline(scene, viewport, 800);
  ASSERT_EQ(layout.memory.size(), 1u);
  EXPECT_EQ(layout.memory[0].group, 1);
  EXPECT_DOUBLE_EQ(layout.height_px, layout_height(scene, {}));
  // Nor a peak in its title; the other group gives its peak with the unit.
  EXPECT_EQ(layout.headers[0].text.find("peak mem"), std::string::npos) << layout.headers[0].text;
  EXPECT_NE(layout.headers[1].text.find("peak mem 1 M_B"), std::string::npos) << layout.headers[1].text;
}

// Zoomed out over many microbatches, intervals under a pixel merge into one cell of their peak:
// about a cell per pixel per band, and the darkest (peak) cell is still there.
TEST(MemoryChart, TheStripKeepsAboutACellPerPixelAndItsPeaks) {
  TimelineScene scene;
  scene.add(make_group("zb-h2", evaluated("zb-h2", uniform_spec(16, 512)), std::nullopt));
  Viewport viewport;
  viewport.fit(0, scene.end_time(), plot_width(600, {}));
  const TimelineLayout layout = layout_timeline(scene, viewport, 600);
  const MemoryChartItem& chart = layout.memory.at(0);
  ASSERT_TRUE(chart.strip);
  EXPECT_LE(chart.cells.size(), static_cast<std::size_t>(16 * (layout.plot.w + 2)));
  const Rgb darkest = memory_heat_colour(chart.max_value, chart.max_value, std::nullopt);
  EXPECT_TRUE(std::any_of(chart.cells.begin(), chart.cells.end(), [&](const HeatCell& cell) { return cell.colour == darkest; }));
  for (const HeatCell& cell : chart.cells) {
    EXPECT_GE(cell.rect.x, layout.plot.x - 1e-9);
    EXPECT_LE(cell.rect.right(), layout.plot.right() + 1e-9);
  }
}

TEST(MemoryChart, HeatColoursRunFromPaleToDarkAndTheLimitIsRed) {
  EXPECT_EQ(memory_heat_colour(0, 8, std::nullopt), (Rgb{0xF0, 0xF4, 0xFA}));
  EXPECT_EQ(memory_heat_colour(8, 8, std::nullopt), (Rgb{0x08, 0x30, 0x6B}));
  EXPECT_EQ(memory_heat_colour(8, 8, 8.0), (Rgb{0x08, 0x30, 0x6B}));  // at the limit is not over it
  EXPECT_EQ(memory_heat_colour(9, 10, 8.0), limit_colour());
  EXPECT_LT(memory_heat_colour(6, 8, std::nullopt).r, memory_heat_colour(2, 8, std::nullopt).r);
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

std::vector<std::string> legend_texts(const TimelineLayout& layout) {
  std::vector<std::string> out;
  for (const LegendEntry& entry : layout.legend) out.push_back(entry.text);
  return out;
}

// Offloads and reloads run on the copy engine beside compute: they are no boxes, no busy time and
// do not close a bubble.
TEST(Scene, CopiesAreNeitherComputeNorBusyTime) {
  const Trace trace = evaluated("po-h", offload_spec());
  const TraceGroup group = make_group("po-h", trace, std::nullopt);
  ASSERT_TRUE(group.has_copies());
  std::size_t copies = 0, listed = 0;
  for (const Span& span : trace.spans) copies += span.stream == Stream::copy;
  for (int d = 0; d < group.devices(); ++d) {
    for (int i : group.device_copies[static_cast<std::size_t>(d)]) {
      EXPECT_EQ(trace.spans[static_cast<std::size_t>(i)].stream, Stream::copy);
      EXPECT_EQ(trace.spans[static_cast<std::size_t>(i)].device, d);
      ++listed;
    }
    for (int i : group.device_spans[static_cast<std::size_t>(d)]) {
      EXPECT_EQ(trace.spans[static_cast<std::size_t>(i)].stream, Stream::compute);
    }
    double idle = 0;
    for (const Interval& gap : group.idle[static_cast<std::size_t>(d)]) idle += gap.length();
    EXPECT_NEAR(idle, trace.metrics.idle[static_cast<std::size_t>(d)], 1e-9) << "d" << d;
  }
  EXPECT_GT(copies, 0u);
  EXPECT_EQ(listed, copies);
  EXPECT_NEAR(group.end_time, trace.metrics.makespan, 1e-9);
  EXPECT_FALSE(make_group("zb-h1", evaluated("zb-h1", uniform_spec(4, 8)), std::nullopt).has_copies());
}

// As the SVG writer draws them: under each device row of a trace with copies, a pixel below the
// row, the offload bar above the reload bar; in the pass colours; hovering one names the copy.
TEST(Layout, CopiesAreThinBarsUnderTheirRowOffloadsAboveReloads) {
  const Trace trace = evaluated("po-h", offload_spec());
  TimelineScene scene;
  scene.add(make_group("po-h", trace, std::nullopt));
  const LayoutStyle style;
  Viewport viewport;
  viewport.fit(0, scene.end_time(), plot_width(1200, style));
  const TimelineLayout layout = layout_timeline(scene, viewport, 1200, style);

  const auto copies =
      std::count_if(trace.spans.begin(), trace.spans.end(), [](const Span& s) { return s.stream == Stream::copy; });
  ASSERT_EQ(static_cast<long>(layout.copy_bars.size()), copies);
  ASSERT_EQ(layout.rows.size(), 4u);
  int offloads = 0, reloads = 0;
  for (const BoxItem& bar : layout.copy_bars) {
    const Span& span = trace.spans[static_cast<std::size_t>(bar.span)];
    ASSERT_EQ(span.stream, Stream::copy);
    const RowItem& row = layout.rows[static_cast<std::size_t>(span.device)];
    EXPECT_NEAR(bar.rect.x, layout.plot.x + viewport.x_of(span.start), 1e-9);
    EXPECT_NEAR(bar.rect.w, span.duration() * viewport.px_per_time(), 1e-9);
    EXPECT_DOUBLE_EQ(bar.rect.h, style.copy_bar_px);
    const double expected_y = row.lane.bottom() + 1 + (span.pass == Pass::O ? 0 : style.copy_bar_px);
    EXPECT_DOUBLE_EQ(bar.rect.y, expected_y) << pass_name(span.pass);
    EXPECT_EQ(bar.colour, pass_colour(span.pass, span.chunk));
    EXPECT_FALSE(bar.show_label);
    offloads += span.pass == Pass::O;
    reloads += span.pass == Pass::L;
  }
  EXPECT_GT(offloads, 0);
  EXPECT_EQ(reloads, offloads);
  // The strip lies between its row and the next one, apart from both.
  const double strip = 2 * style.copy_bar_px + 1;
  for (std::size_t d = 1; d < layout.rows.size(); ++d) {
    EXPECT_DOUBLE_EQ(layout.rows[d].lane.y, layout.rows[d - 1].lane.bottom() + strip + style.row_gap_px);
  }
  ASSERT_EQ(layout.memory.size(), 1u);
  EXPECT_DOUBLE_EQ(layout.memory[0].rect.y, layout.rows[3].lane.bottom() + strip + style.row_gap_px);
  EXPECT_NEAR(layout.height_px, layout_height(scene, style), 1e-9);
  // No bar runs into a row.
  for (const BoxItem& bar : layout.copy_bars) {
    for (const RowItem& row : layout.rows) {
      EXPECT_TRUE(bar.rect.bottom() <= row.lane.y || bar.rect.y >= row.lane.bottom());
    }
  }

  const std::vector<std::string> legend = legend_texts(layout);
  EXPECT_EQ(legend, (std::vector<std::string>{"F", "B", "W", "BW", "O offload", "L reload", "chunk 1", "idle"}));
  EXPECT_EQ(layout.legend[4].colour, pass_colour(Pass::O));
  EXPECT_EQ(layout.legend[5].colour, pass_colour(Pass::L));

  // Hovering the middle of a reload bar finds it and names it.
  const auto reload = std::find_if(layout.copy_bars.begin(), layout.copy_bars.end(), [&](const BoxItem& bar) {
    return trace.spans[static_cast<std::size_t>(bar.span)].pass == Pass::L;
  });
  ASSERT_NE(reload, layout.copy_bars.end());
  const BoxItem* hit = hit_test(layout, reload->rect.x + reload->rect.w / 2, reload->rect.y + reload->rect.h / 2);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->span, reload->span);
  const Span& span = trace.spans[static_cast<std::size_t>(reload->span)];
  const std::string tip = describe_span(scene.groups()[0], reload->span);
  EXPECT_NE(tip.find(to_token({Pass::L, span.microbatch, span.chunk})), std::string::npos) << tip;
  EXPECT_NE(tip.find(fmt::format("stage {}", span.stage)), std::string::npos) << tip;
  EXPECT_NE(tip.find("reload from host"), std::string::npos) << tip;
  EXPECT_NE(tip.find(fmt::format("start {:.6g} ms, end {:.6g} ms", span.start, span.end)), std::string::npos) << tip;
}

// A trace without copies keeps the layout it had: no strip, no copy bars, no O or L in the legend;
// beside one with copies, only the latter gets strips.
TEST(Layout, ATraceWithoutCopiesHasNoStripAndNoCopyLegend) {
  const LayoutStyle style;
  TimelineScene plain;
  plain.add(make_group("zb-h1", evaluated("zb-h1", uniform_spec(4, 8)), std::nullopt));
  const TimelineLayout layout = layout_timeline(plain, Viewport(0, 30), 1000, style);
  EXPECT_TRUE(layout.copy_bars.empty());
  EXPECT_EQ(legend_texts(layout), (std::vector<std::string>{"F", "B", "W", "BW", "chunk 1", "idle"}));
  for (std::size_t d = 1; d < layout.rows.size(); ++d) {
    EXPECT_DOUBLE_EQ(layout.rows[d].lane.y, layout.rows[d - 1].lane.bottom() + style.row_gap_px);
  }

  TimelineScene mixed;
  mixed.add(make_group("zb-h1", evaluated("zb-h1", uniform_spec(4, 8)), std::nullopt));
  mixed.add(make_group("po-h", evaluated("po-h", offload_spec()), std::nullopt));
  const TimelineLayout both = layout_timeline(mixed, Viewport(0, 30), 1000, style);
  ASSERT_EQ(both.rows.size(), 8u);
  for (std::size_t d = 0; d < 4; ++d) EXPECT_DOUBLE_EQ(both.rows[d].lane.y, layout.rows[d].lane.y);
  EXPECT_DOUBLE_EQ(both.rows[5].lane.y, both.rows[4].lane.bottom() + 2 * style.copy_bar_px + 1 + style.row_gap_px);
  ASSERT_FALSE(both.copy_bars.empty());
  for (const BoxItem& bar : both.copy_bars) EXPECT_EQ(bar.group, 1);
  EXPECT_EQ(legend_texts(both).size(), 8u);
  EXPECT_NEAR(both.height_px, layout_height(mixed, style), 1e-9);
}

}  // namespace
}  // namespace zb::view
