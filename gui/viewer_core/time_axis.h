// Tick marks of the time axis: round steps (1, 2, 5 x 10^k) at least a minimum spacing apart.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gui/viewer_core/viewport.h"

namespace zb::view {

struct Tick {
  double time = 0;
  double x_px = 0;  // from the plot's left edge
  std::string label;
};

// The smallest step of the form {1, 2, 5} x 10^k that is >= min_step (min_step > 0).
double nice_step(double min_step);

// Ticks inside [0, width_px] at least min_spacing_px apart, labelled with the value and, on the
// first tick only, the unit ("0 ms", "5", "10", ...).
std::vector<Tick> axis_ticks(const Viewport& viewport, double width_px, double min_spacing_px,
                             std::string_view unit);

// A number with no more decimals than `step` needs: format_tick(2.5, 0.5) = "2.5".
std::string format_tick(double value, double step);

}  // namespace zb::view
