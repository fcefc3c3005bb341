// Tick marks of the time axis (see time_axis.h).
#include "gui/viewer_core/time_axis.h"

#include <cmath>

#include <fmt/format.h>

namespace zb::view {

double nice_step(double min_step) {
  if (!(min_step > 0) || !std::isfinite(min_step)) return 1.0;
  const double decade = std::pow(10.0, std::floor(std::log10(min_step)));
  for (double mantissa : {1.0, 2.0, 5.0, 10.0}) {
    // The tolerance absorbs pow/log10 rounding so that exactly 2e-3 stays 2e-3.
    if (mantissa * decade >= min_step * (1 - 1e-12)) return mantissa * decade;
  }
  return 10.0 * decade;
}

std::string format_tick(double value, double step) {
  int decimals = 0;
  if (step < 1) decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  if (std::abs(value) < step * 1e-6) value = 0;  // no "-0"
  return fmt::format("{:.{}f}", value, decimals);
}

std::vector<Tick> axis_ticks(const Viewport& viewport, double width_px, double min_spacing_px,
                             std::string_view unit) {
  std::vector<Tick> ticks;
  if (width_px <= 0 || min_spacing_px <= 0) return ticks;
  const double step = nice_step(min_spacing_px / viewport.px_per_time());
  const double t0 = viewport.time_of(0);
  const double t1 = viewport.time_of(width_px);
  const double first = std::ceil(t0 / step - 1e-9);
  for (double k = first;; k += 1) {
    const double t = k * step;
    if (t > t1 + step * 1e-9) break;
    Tick tick;
    tick.time = t;
    tick.x_px = viewport.x_of(t);
    tick.label = format_tick(t, step);
    if (ticks.empty() && !unit.empty()) tick.label += fmt::format(" {}", unit);
    ticks.push_back(std::move(tick));
    if (ticks.size() > 10000) break;  // a guard against absurd spacing arguments
  }
  return ticks;
}

}  // namespace zb::view
