// The horizontal view of the timeline (see viewport.h).
#include "gui/viewer_core/viewport.h"

#include <algorithm>

namespace zb::view {

namespace {
// Limits keep the arithmetic finite however far the wheel is turned.
constexpr double kMinPxPerTime = 1e-9;
constexpr double kMaxPxPerTime = 1e12;
constexpr double kFitMargin = 0.01;  // fraction of the range left free on each side
}  // namespace

void Viewport::fit(double t0, double t1, double width_px) {
  if (!(t1 > t0)) t1 = t0 + 1.0;
  width_px = std::max(width_px, 1.0);
  const double range = t1 - t0;
  const double shown = range * (1.0 + 2.0 * kFitMargin);
  px_per_time_ = std::clamp(width_px / shown, kMinPxPerTime, kMaxPxPerTime);
  time_start_ = t0 - range * kFitMargin;
}

void Viewport::zoom_at(double x_px, double factor) {
  if (!(factor > 0)) return;
  const double anchor = time_of(x_px);
  px_per_time_ = std::clamp(px_per_time_ * factor, kMinPxPerTime, kMaxPxPerTime);
  time_start_ = anchor - x_px / px_per_time_;
}

void Viewport::pan_px(double dx_px) { time_start_ -= dx_px / px_per_time_; }

}  // namespace zb::view
