// Conversions between the plain-C++ timeline model and Qt types.
#pragma once

#include <QColor>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <string>

#include "gui/viewer_core/pass_colours.h"
#include "gui/viewer_core/timeline_layout.h"

namespace zb::view {

inline QColor to_qcolor(Rgb colour) { return QColor(colour.r, colour.g, colour.b); }
inline QRectF to_qrect(const RectPx& rect) { return QRectF(rect.x, rect.y, rect.w, rect.h); }
inline QPointF to_qpoint(const PointPx& point) { return QPointF(point.x, point.y); }
inline QString qstr(const std::string& text) { return QString::fromStdString(text); }

}  // namespace zb::view
