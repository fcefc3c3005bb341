// Fixed colours of the timeline: passes (as in the SVG writer), bubbles, per-device memory lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/core/action.h"

namespace zb::view {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;

  friend bool operator==(const Rgb&, const Rgb&) = default;
};

// F #4C78A8, B #54A24B, W #F58518, BW #B279A2 for chunk 0 (zb::pass_color, as the SVG writer);
// chunk c >= 1 is mixed towards white as the SVG writer does (45% odd chunks, 25% even ones).
Rgb pass_colour(Pass pass, int chunk = 0);
// The fill of idle time on a device: zb::idle_color(), the SVG writer's pale red.
Rgb bubble_colour();
Rgb bubble_outline_colour();
// Background of the plot and the lane of a device row.
Rgb background_colour();
Rgb lane_colour();
// Line colour of device d in the memory chart (a cycled categorical palette).
Rgb device_line_colour(int device);
// The memory limit line.
Rgb limit_colour();

// "#4C78A8" -> {0x4C, 0x78, 0xA8}; {0,0,0} when malformed.
Rgb parse_hex(std::string_view hex);
// Mixes `colour` with white: fraction 0 keeps it, 1 gives white.
Rgb lighten(Rgb colour, double fraction);
// "#4c78a8"
std::string to_hex(Rgb colour);

}  // namespace zb::view
