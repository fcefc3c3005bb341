// A screenshot of ZB-H1 at p=4, m=8: the F, B and W colours are there, and idle (bubble) pixels
// appear only where the trace has gaps, and wherever it has one. One of po-h: its copy bars are
// painted in their colours, and the legend shows O and L only then.
#include <gtest/gtest.h>

#include <QImage>

#include "gui/app/main_window.h"
#include "gui/app/timeline_view.h"
#include "tests/gui/gui_test_support.h"
#include "tests/gui/qt_test_support.h"
#include "gui/viewer_core/explorer_run.h"
#include "gui/viewer_core/pass_colours.h"
#include "sim/app/catalog/generators.h"

namespace zb::view {
namespace {

using testing::offload_spec;
using testing::test_app;
using testing::uniform_spec;

bool is(QRgb pixel, Rgb colour) {
  return qRed(pixel) == colour.r && qGreen(pixel) == colour.g && qBlue(pixel) == colour.b;
}

TEST(Screenshot, ZbH1HasThePassColoursAndBubblesExactlyInTheGaps) {
  test_app();
  MainWindow window(catalog::generators());
  window.resize(1300, 800);
  window.set_problem(uniform_spec(4, 8), {"zb-h1"});
  window.show();
  QCoreApplication::processEvents();
  TimelineView* view = window.timeline();
  const QImage image = view->grab().toImage().convertToFormat(QImage::Format_RGB32);
  image.save(QString(ZB_BINARY_DIR) + "/tests/gui/zb_h1_screenshot.png");
  ASSERT_EQ(image.width(), view->width());  // the offscreen platform has a device pixel ratio of 1

  const TimelineLayout& layout = view->layout();
  const Viewport& viewport = view->viewport();
  const TraceGroup& group = window.scene().groups().at(0);
  ASSERT_EQ(layout.rows.size(), 4u);
  const double px = 1.0 / viewport.px_per_time();  // one pixel in time units

  int f = 0, b = 0, w = 0, bubble = 0;
  for (const RowItem& row : layout.rows) {
    const int y = static_cast<int>(row.lane.y + row.lane.h / 2);
    const auto& gaps = group.idle[static_cast<std::size_t>(row.device)];
    for (int x = static_cast<int>(layout.plot.x); x < static_cast<int>(layout.plot.right()); ++x) {
      const QRgb pixel = image.pixel(x, y);
      f += is(pixel, pass_colour(Pass::F));
      b += is(pixel, pass_colour(Pass::B));
      w += is(pixel, pass_colour(Pass::W));
      if (!is(pixel, bubble_colour())) continue;
      ++bubble;
      const double t = viewport.time_of(x + 0.5 - layout.plot.x);
      const bool in_gap = std::any_of(gaps.begin(), gaps.end(), [&](const Interval& gap) {
        return t >= gap.start - px && t <= gap.end + px;
      });
      EXPECT_TRUE(in_gap) << "bubble pixel at x=" << x << " (t=" << t << ") on device " << row.device
                          << " where the trace has no gap";
    }
    // Every gap wider than a few pixels shows bubble pixels in its middle.
    for (const Interval& gap : gaps) {
      if (gap.length() * viewport.px_per_time() < 4) continue;
      const int x = static_cast<int>(layout.plot.x + viewport.x_of((gap.start + gap.end) / 2));
      EXPECT_TRUE(is(image.pixel(x, y), bubble_colour()))
          << "gap [" << gap.start << ", " << gap.end << "] on device " << row.device << " is not drawn as a bubble";
    }
  }
  EXPECT_GT(f, 100);
  EXPECT_GT(b, 100);
  EXPECT_GT(w, 100);
  EXPECT_GT(bubble, 50);
}

// Pixels of `colour` in rows [y0, y1) of the image.
int count(const QImage& image, Rgb colour, int y0, int y1) {
  int n = 0;
  for (int y = y0; y < std::min(y1, image.height()); ++y) {
    for (int x = 0; x < image.width(); ++x) n += is(image.pixel(x, y), colour);
  }
  return n;
}

TEST(Screenshot, PoHPaintsItsCopyBarsAndListsThemInTheLegend) {
  test_app();
  MainWindow window(catalog::generators());
  window.resize(1300, 800);
  window.set_problem(offload_spec(), {"po-h"});
  window.show();
  QCoreApplication::processEvents();
  TimelineView* view = window.timeline();
  QImage image = view->grab().toImage().convertToFormat(QImage::Format_RGB32);
  image.save(QString(ZB_BINARY_DIR) + "/tests/gui/po_h_screenshot.png");

  const TimelineLayout& layout = view->layout();
  ASSERT_FALSE(layout.copy_bars.empty());
  int checked = 0;
  for (const BoxItem& bar : layout.copy_bars) {
    if (bar.rect.w < 3) continue;
    const int x = static_cast<int>(bar.rect.x + bar.rect.w / 2), y = static_cast<int>(bar.rect.y + bar.rect.h / 2);
    EXPECT_TRUE(is(image.pixel(x, y), bar.colour)) << "copy bar of span " << bar.span << " at " << x << ", " << y;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(layout.copy_bars.size()));
  // The legend's swatches, above the time axis.
  const int legend_bottom = static_cast<int>(layout.plot.y) - 20;
  EXPECT_GT(count(image, pass_colour(Pass::O), 0, legend_bottom), 20);
  EXPECT_GT(count(image, pass_colour(Pass::L), 0, legend_bottom), 20);

  // Without copies, neither colour anywhere.
  window.set_problem(uniform_spec(4, 8), {"zb-h1"});
  QCoreApplication::processEvents();
  image = view->grab().toImage().convertToFormat(QImage::Format_RGB32);
  EXPECT_TRUE(view->layout().copy_bars.empty());
  EXPECT_EQ(count(image, pass_colour(Pass::O), 0, image.height()), 0);
  EXPECT_EQ(count(image, pass_colour(Pass::L), 0, image.height()), 0);
}

}  // namespace
}  // namespace zb::view
