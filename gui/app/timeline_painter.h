// Paints a laid-out timeline with QPainter: the one drawing routine behind the widget, the PNG and
// SVG exports, the screenshot and the redraw benchmark.
#pragma once

#include <QPainter>
#include <QRectF>

#include "gui/viewer_core/timeline_layout.h"

namespace zb::view {

// Paints everything that intersects `clip` (a widget's exposed rectangle: scrolled-away rows cost
// nothing); the whole layout when clip is null.
void paint_timeline(QPainter& painter, const TimelineLayout& layout, const QRectF& clip = QRectF());

}  // namespace zb::view
