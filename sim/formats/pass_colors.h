// The fixed colours of the passes, shared by the SVG writer and the viewer.
#pragma once

#include <string_view>

#include "sim/core/action.h"

namespace zb {

// F blue, B green, W orange, BW purple; the copies O (offload) teal and L (reload) brown
// (Vega/Tableau palette: readable and colour-blind safe).
constexpr std::string_view pass_color(Pass pass) {
  switch (pass) {
    case Pass::F: return "#4C78A8";
    case Pass::B: return "#54A24B";
    case Pass::W: return "#F58518";
    case Pass::BW: return "#B279A2";
    case Pass::O: return "#72B7B2";
    case Pass::L: return "#9D755D";
  }
  return "#000000";
}

// How far chunk c's boxes are mixed towards white (0: not at all), so neighbouring chunks of an
// interleaved or V placement always differ.
constexpr double chunk_lightening(int chunk) {
  if (chunk <= 0) return 0.0;
  return chunk % 2 == 1 ? 0.45 : 0.25;
}

// Idle time: a pale red, so bubbles stand out against the pass colours.
constexpr std::string_view idle_color() { return "#F3D3D3"; }

}  // namespace zb
