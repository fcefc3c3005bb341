// Fixed colours of the timeline (see pass_colours.h).
#include "gui/viewer_core/pass_colours.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "sim/formats/pass_colors.h"

namespace zb::view {

Rgb lighten(Rgb colour, double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  auto mix = [fraction](std::uint8_t c) {
    return static_cast<std::uint8_t>(std::lround(c + (255.0 - c) * fraction));
  };
  return {mix(colour.r), mix(colour.g), mix(colour.b)};
}

Rgb parse_hex(std::string_view hex) {
  auto channel = [&](std::size_t offset) {
    int value = 0;
    for (char c : hex.substr(offset, 2)) {
      value = value * 16 + (c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - 'A' + 10));
    }
    return static_cast<std::uint8_t>(value);
  };
  if (hex.size() != 7 || hex[0] != '#') return {};
  return {channel(1), channel(3), channel(5)};
}

Rgb pass_colour(Pass pass, int chunk) {
  // The SVG writer's colours and chunk shading (sim/formats/pass_colors.h).
  return lighten(parse_hex(pass_color(pass)), chunk_lightening(chunk));
}

Rgb bubble_colour() { return parse_hex(idle_color()); }
Rgb bubble_outline_colour() { return {0xD9, 0x8C, 0x8C}; }
Rgb background_colour() { return {0xFF, 0xFF, 0xFF}; }
Rgb lane_colour() { return {0xF4, 0xF4, 0xF4}; }
Rgb limit_colour() { return {0xD6, 0x27, 0x28}; }

Rgb device_line_colour(int device) {
  // Tableau 10 minus red (kept for the limit line).
  static constexpr std::array<Rgb, 9> kPalette{{{0x1F, 0x77, 0xB4},
                                               {0xFF, 0x7F, 0x0E},
                                               {0x2C, 0xA0, 0x2C},
                                               {0x94, 0x67, 0xBD},
                                               {0x8C, 0x56, 0x4B},
                                               {0xE3, 0x77, 0xC2},
                                               {0x7F, 0x7F, 0x7F},
                                               {0xBC, 0xBD, 0x22},
                                               {0x17, 0xBE, 0xCF}}};
  const auto n = static_cast<int>(kPalette.size());
  return kPalette[static_cast<std::size_t>(((device % n) + n) % n)];
}

std::string to_hex(Rgb colour) { return fmt::format("#{:02x}{:02x}{:02x}", colour.r, colour.g, colour.b); }

}  // namespace zb::view
