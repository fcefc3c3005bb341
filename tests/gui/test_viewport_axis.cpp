// The viewport (fit, zoom about a point, pan) and the time axis ticks.
#include <gtest/gtest.h>

#include <cmath>

#include "gui/viewer_core/time_axis.h"
#include "gui/viewer_core/viewport.h"

namespace zb::view {
namespace {

TEST(Viewport, FitShowsTheWholeRangeWithSmallMargins) {
  Viewport v;
  v.fit(0, 33, 1000);
  EXPECT_GT(v.x_of(0), 0);
  EXPECT_LT(v.x_of(0), 20);
  EXPECT_LT(v.x_of(33), 1000);
  EXPECT_GT(v.x_of(33), 980);
  // Symmetric margins.
  EXPECT_NEAR(v.x_of(0), 1000 - v.x_of(33), 1e-9);
}

TEST(Viewport, DegenerateRangeStillHasAPositiveScale) {
  Viewport v;
  v.fit(5, 5, 300);
  EXPECT_GT(v.px_per_time(), 0);
  EXPECT_TRUE(std::isfinite(v.x_of(5)));
}

TEST(Viewport, ZoomKeepsTheTimeUnderTheCursor) {
  Viewport v(0, 10);  // 10 px per unit
  const double before = v.time_of(250);
  v.zoom_at(250, 2.0);
  EXPECT_DOUBLE_EQ(v.px_per_time(), 20);
  EXPECT_NEAR(v.time_of(250), before, 1e-12);
  v.zoom_at(100, 0.25);
  EXPECT_DOUBLE_EQ(v.px_per_time(), 5);
}

TEST(Viewport, DraggingRightShowsEarlierTimes) {
  Viewport v(10, 4);
  v.pan_px(40);  // 40 px = 10 time units
  EXPECT_DOUBLE_EQ(v.time_start(), 0);
  EXPECT_DOUBLE_EQ(v.x_of(0), 0);
}

TEST(TimeAxis, NiceStepsAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(nice_step(0.7), 1);
  EXPECT_DOUBLE_EQ(nice_step(1), 1);
  EXPECT_DOUBLE_EQ(nice_step(1.01), 2);
  EXPECT_DOUBLE_EQ(nice_step(3), 5);
  EXPECT_DOUBLE_EQ(nice_step(7), 10);
  EXPECT_NEAR(nice_step(0.0021), 0.005, 1e-15);
  EXPECT_NEAR(nice_step(0.002), 0.002, 1e-15);
  EXPECT_DOUBLE_EQ(nice_step(420), 500);
}

TEST(TimeAxis, TicksAreEvenlySpacedAtLeastTheMinimumApartWithTheUnitOnTheFirst) {
  Viewport v;
  v.fit(0, 33, 1000);
  const auto ticks = axis_ticks(v, 1000, 70, "ms");
  ASSERT_GE(ticks.size(), 5u);
  EXPECT_EQ(ticks.front().label, "0 ms");
  EXPECT_EQ(ticks[1].label, "5");
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    EXPECT_GE(ticks[i].x_px - ticks[i - 1].x_px, 70 - 1e-9);
    EXPECT_NEAR(ticks[i].x_px, v.x_of(ticks[i].time), 1e-9);
  }
  for (const auto& tick : ticks) {
    EXPECT_GE(tick.x_px, 0);
    EXPECT_LE(tick.x_px, 1000);
  }
}

TEST(TimeAxis, LabelsHaveTheDecimalsTheStepNeeds) {
  EXPECT_EQ(format_tick(2.5, 0.5), "2.5");
  EXPECT_EQ(format_tick(3, 1), "3");
  EXPECT_EQ(format_tick(0.02, 0.01), "0.02");
  EXPECT_EQ(format_tick(-1e-17, 0.1), "0.0");
  EXPECT_EQ(format_tick(1500, 500), "1500");
}

}  // namespace
}  // namespace zb::view

#include "gui/viewer_core/timeline_layout.h"

namespace zb::view {
namespace {

TEST(Format, AmountsGetAnSiSuffixWhenLarge) {
  EXPECT_EQ(format_amount(4), "4");
  EXPECT_EQ(format_amount(7.5), "7.5");
  EXPECT_EQ(format_amount(2621440), "2.62M");
  EXPECT_EQ(format_amount(71.048759296), "71.05");
  EXPECT_EQ(format_amount(13107.2), "13.1k");
  EXPECT_EQ(format_amount(3.2e10), "32G");
}

}  // namespace
}  // namespace zb::view
