// Paints a laid-out timeline with QPainter: the one drawing routine behind the widget, the PNG and
// SVG exports, the screenshot and the redraw benchmark.
#pragma once

#include <QPainter>

#include "timeline/timeline_layout.h"

namespace zb::view {

void paint_timeline(QPainter& painter, const TimelineLayout& layout);

}  // namespace zb::view
