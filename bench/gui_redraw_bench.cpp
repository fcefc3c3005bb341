// Redraw benchmark: a slider step in the explorer to a repainted timeline (evaluate, layout, paint),
// as a user dragging t_w sees it. Prints the median, 90th percentile and worst time per step.
#include <QApplication>
#include <QDoubleSpinBox>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gui/app/explorer_panel.h"
#include "gui/app/main_window.h"
#include "gui/app/timeline_painter.h"
#include "gui/app/timeline_view.h"
#include "gui/viewer_core/explorer_run.h"
#include "gui/viewer_core/viewer_options.h"
#include "sim/app/catalog/generators.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void report(const char* what, std::vector<double> times) {
  std::sort(times.begin(), times.end());
  const auto at = [&](double q) { return times[static_cast<std::size_t>(q * static_cast<double>(times.size() - 1))]; };
  std::printf("%-44s median %7.2f ms   p90 %7.2f ms   max %7.2f ms   (n=%zu)\n", what, at(0.5), at(0.9), times.back(),
              times.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QApplication app(argc, argv);
  const int p = argc > 1 ? std::atoi(argv[1]) : 8;
  const int m = argc > 2 ? std::atoi(argv[2]) : 32;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 60;

  zb::GeneratorRegistry registry = zb::catalog::generators();
  std::vector<std::string> schedules;
  for (const char* name : {"1f1b", "zb-h1", "zb-h2", "zb-auto"}) {
    if (registry.find(name)) schedules.emplace_back(name);
  }
  zb::view::MainWindow window(std::move(registry));
  window.resize(1400, 900);
  zb::ProblemSpec spec = zb::view::default_problem_spec();
  spec.devices = p;
  spec.microbatches = m;
  window.set_problem(spec, schedules);
  window.show();
  QApplication::processEvents();

  auto* tw = window.panel()->findChild<QDoubleSpinBox*>("t_w");
  std::vector<double> step_ms, recompute_ms, layout_ms, paint_ms;
  for (int i = 0; i < iterations; ++i) {
    const double value = 0.5 + 0.02 * (i % 50);  // t_w sweeps 0.5 .. 1.48 and back, as a drag does
    const auto start = Clock::now();
    tw->setValue(value);  // panel -> recompute (generate + evaluate all) -> relayout
    window.timeline()->repaint();
    step_ms.push_back(ms_since(start));

    const auto t1 = Clock::now();
    window.recompute();
    recompute_ms.push_back(ms_since(t1));

    const auto t2 = Clock::now();
    const auto layout = zb::view::layout_timeline(window.scene(), window.timeline()->viewport(),
                                                  window.timeline()->width(), window.timeline()->style());
    layout_ms.push_back(ms_since(t2));

    QImage image(window.timeline()->width(), static_cast<int>(layout.height_px) + 1, QImage::Format_RGB32);
    const auto t3 = Clock::now();
    {
      QPainter painter(&image);
      zb::view::paint_timeline(painter, layout);
    }
    paint_ms.push_back(ms_since(t3));
  }
  std::size_t boxes = window.timeline()->layout().boxes.size();
  std::printf("zbview_bench: p=%d m=%d, %zu schedules, %zu boxes, %zu bubbles, timeline %dx%d px\n", p, m,
              schedules.size(), boxes, window.timeline()->layout().bubbles.size(), window.timeline()->width(),
              window.timeline()->height());
  report("slider step -> repainted timeline", step_ms);
  report("  of which recompute (generate+evaluate+scene)", recompute_ms);
  report("  of which layout", layout_ms);
  report("  of which paint (QImage)", paint_ms);
  return 0;
}
