// Paints a laid-out timeline with QPainter (see timeline_painter.h).
#include "gui/app/timeline_painter.h"

#include <QFontMetricsF>
#include <QLinearGradient>
#include <QPainterPath>
#include <QHash>
#include <QPolygonF>
#include <QStaticText>

#include <cmath>

#include "gui/app/qt_colour.h"

namespace zb::view {

namespace {

void paint_axis(QPainter& painter, const TimelineLayout& layout) {
  painter.setPen(QPen(QColor(0xDD, 0xDD, 0xDD), 0));
  for (const Tick& tick : layout.ticks) {
    painter.drawLine(QPointF(tick.x_px, layout.plot.y - 4), QPointF(tick.x_px, layout.height_px));
  }
  painter.setPen(QColor(0x44, 0x44, 0x44));
  for (const Tick& tick : layout.ticks) {
    painter.drawText(QPointF(tick.x_px + 3, layout.plot.y - 6), qstr(tick.label));
  }
}

void paint_arrow(QPainter& painter, const ArrowItem& arrow) {
  const QPointF from = to_qpoint(arrow.from);
  const QPointF to = to_qpoint(arrow.to);
  painter.drawLine(from, to);
  const double angle = std::atan2(to.y() - from.y(), to.x() - from.x());
  constexpr double kHead = 5;
  QPolygonF head;
  head << to << to - QPointF(kHead * std::cos(angle - 0.4), kHead * std::sin(angle - 0.4))
       << to - QPointF(kHead * std::cos(angle + 0.4), kHead * std::sin(angle + 0.4));
  painter.drawPolygon(head);
}

void paint_legend(QPainter& painter, const TimelineLayout& layout) {
  const QFontMetricsF metrics(painter.font());
  constexpr double kSwatch = 11, kGap = 14;
  double width = 0;
  for (const LegendEntry& entry : layout.legend) {
    width += kSwatch + 4 + metrics.horizontalAdvance(qstr(entry.text)) + kGap;
  }
  double x = layout.width_px - width - 4;
  const double y = 4;
  for (const LegendEntry& entry : layout.legend) {
    const QColor colour = to_qcolor(entry.colour);
    const QString text = qstr(entry.text);
    painter.fillRect(QRectF(x, y, kSwatch, kSwatch), colour);
    painter.setPen(QPen(colour.darker(140), 0));
    painter.drawRect(QRectF(x, y, kSwatch - 1, kSwatch - 1));
    x += kSwatch + 4;
    painter.setPen(QColor(0x33, 0x33, 0x33));
    painter.drawText(QPointF(x, y + kSwatch - 1), text);
    x += metrics.horizontalAdvance(text) + kGap;
  }
}

}  // namespace

void paint_timeline(QPainter& painter, const TimelineLayout& layout, const QRectF& clip_rect) {
  const QRectF clip = clip_rect.isNull() ? QRectF(0, 0, layout.width_px, layout.height_px) : clip_rect;
  // Rows are laid out top to bottom: skip whole items by their vertical extent only.
  auto visible = [&](const RectPx& r) { return r.y <= clip.bottom() && r.y + r.h >= clip.top(); };
  painter.fillRect(clip, to_qcolor(background_colour()));
  paint_axis(painter, layout);
  paint_legend(painter, layout);

  QFont bold = painter.font();
  bold.setBold(true);
  const QFont normal = painter.font();
  painter.setPen(QColor(0x22, 0x22, 0x22));
  painter.setFont(bold);
  for (const GroupHeaderItem& header : layout.headers) {
    if (!visible(header.rect)) continue;
    painter.drawText(to_qrect(header.rect).adjusted(6, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, qstr(header.text));
  }
  painter.setFont(normal);

  for (const RowItem& row : layout.rows) {
    if (!visible(row.lane)) continue;
    painter.fillRect(to_qrect(row.lane), to_qcolor(lane_colour()));
    painter.setPen(QColor(0x44, 0x44, 0x44));
    painter.drawText(QRectF(0, row.lane.y, row.lane.x - 8, row.lane.h), Qt::AlignRight | Qt::AlignVCenter, qstr(row.label));
  }

  // Bubbles: pale red fill with darker top and bottom edges so that thin ones still read as gaps.
  const QColor bubble = to_qcolor(bubble_colour());
  const QPen bubble_edge(to_qcolor(bubble_outline_colour()), 0);
  for (const BubbleItem& item : layout.bubbles) {
    if (!visible(item.rect)) continue;
    const QRectF rect = to_qrect(item.rect);
    painter.fillRect(rect, bubble);
    if (rect.width() >= 3) {
      painter.setPen(bubble_edge);
      painter.drawLine(rect.topLeft(), rect.topRight());
      painter.drawLine(rect.bottomLeft() - QPointF(0, 1), rect.bottomRight() - QPointF(0, 1));
    }
  }

  QFont small = normal;
  small.setPointSizeF(std::max(6.0, normal.pointSizeF() * 0.85));
  painter.setFont(small);
  // Boxes first, labels after: one pen per pass colour instead of one per box, and each distinct
  // label laid out once (QStaticText) rather than per box; text layout dominated the paint time.
  QHash<QRgb, QPen> frames;
  for (const BoxItem& box : layout.boxes) {
    if (!visible(box.rect)) continue;
    const QRectF rect = to_qrect(box.rect);
    const QColor fill = to_qcolor(box.colour);
    painter.fillRect(rect, fill);
    if (rect.width() >= 4 && !box.in_pair) {
      // A thin darker frame separates neighbouring boxes of the same pass.
      auto frame = frames.find(fill.rgb());
      if (frame == frames.end()) frame = frames.insert(fill.rgb(), QPen(fill.darker(140), 0));
      painter.setPen(*frame);
      painter.drawRect(rect.adjusted(0, 0, -1, -1));
    }
  }
  // Copy bars are too thin for a frame: back-to-back copies are parted by a pixel of background.
  for (const BoxItem& bar : layout.copy_bars) {
    if (!visible(bar.rect)) continue;
    painter.fillRect(to_qrect(bar.rect).adjusted(0, 0, bar.rect.w >= 3 ? -1 : 0, 0), to_qcolor(bar.colour));
  }
  // An overlapped pair is one block: one frame around its two colours.
  painter.setPen(QPen(QColor(0x33, 0x33, 0x33), 1.5));
  painter.setBrush(Qt::NoBrush);
  for (const RectPx& pair : layout.pairs) {
    if (visible(pair)) painter.drawRect(to_qrect(pair).adjusted(0.75, 0.75, -0.75, -0.75));
  }
  QHash<QString, QStaticText> labels;
  const QColor dark_text(0x22, 0x22, 0x22), light_text(Qt::white);
  for (const BoxItem& box : layout.boxes) {
    if (!box.show_label || !visible(box.rect)) continue;
    const QString text = qstr(box.label);
    auto label = labels.find(text);
    if (label == labels.end()) {
      QStaticText prepared(text);
      prepared.setTextFormat(Qt::PlainText);
      prepared.prepare(QTransform(), small);
      label = labels.insert(text, prepared);
    }
    const QSizeF size = label->size();
    const QColor fill = to_qcolor(box.colour);
    painter.setPen(fill.lightness() > 150 ? dark_text : light_text);
    painter.drawStaticText(QPointF(box.rect.x + (box.rect.w - size.width()) / 2, box.rect.y + (box.rect.h - size.height()) / 2),
                           *label);
  }
  painter.setFont(normal);

  if (!layout.arrows.empty()) {
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setPen(QPen(QColor(0x33, 0x33, 0x33, 170), 1));
    painter.setBrush(QColor(0x33, 0x33, 0x33, 170));
    for (const ArrowItem& arrow : layout.arrows) paint_arrow(painter, arrow);
    painter.setBrush(Qt::NoBrush);
    painter.setRenderHint(QPainter::Antialiasing, false);
  }

  for (const MemoryChartItem& chart : layout.memory) {
    if (!visible(chart.rect)) continue;
    const QRectF rect = to_qrect(chart.rect);
    painter.fillRect(rect, QColor(0xFA, 0xFA, 0xFA));
    painter.setPen(QPen(QColor(0xCC, 0xCC, 0xCC), 0));
    painter.drawRect(rect);
    painter.save();
    painter.setClipRect(rect.adjusted(0, -1, 0, 1));
    for (const HeatCell& heat : chart.cells) painter.fillRect(to_qrect(heat.rect), to_qcolor(heat.colour));
    // Step lines are axis-aligned: no antialiasing needed (it was the slowest part for large m).
    for (std::size_t d = 0; d < chart.device_lines.size(); ++d) {
      QPolygonF line;
      for (const PointPx& point : chart.device_lines[d]) line << to_qpoint(point);
      painter.setPen(QPen(to_qcolor(device_line_colour(static_cast<int>(d))), 1));
      painter.drawPolyline(line);
    }
    if (chart.limit_y) {
      QPen limit(to_qcolor(limit_colour()), 1.5, Qt::DashLine);
      painter.setPen(limit);
      painter.drawLine(QPointF(rect.left(), *chart.limit_y), QPointF(rect.right(), *chart.limit_y));
    }
    painter.restore();
    if (chart.scale.w > 0) {
      QLinearGradient gradient(chart.scale.x, 0, chart.scale.right(), 0);
      gradient.setColorAt(0, to_qcolor(memory_heat_colour(0, 1, std::nullopt)));
      gradient.setColorAt(1, to_qcolor(memory_heat_colour(1, 1, std::nullopt)));
      painter.fillRect(to_qrect(chart.scale), gradient);
      painter.setPen(QPen(QColor(0x99, 0x99, 0x99), 0));
      painter.drawRect(to_qrect(chart.scale));
    }
    // The layout placed every label so that none overlaps another: draw them where they are.
    painter.setFont(small);
    for (const LabelItem& label : chart.labels) {
      const QRectF box = to_qrect(label.rect);
      painter.setPen(to_qcolor(label.colour));
      painter.drawText(box, (label.align_right ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter | Qt::TextDontClip,
                       qstr(label.text));
      if (label.align_right && label.rect.right() <= chart.rect.x) {
        // A tick or a device name of the left column: a short mark at the chart's edge.
        painter.setPen(QPen(QColor(0x99, 0x99, 0x99), 0));
        const double y = label.rect.y + label.rect.h / 2;
        painter.drawLine(QPointF(rect.left() - 3, y), QPointF(rect.left(), y));
      }
    }
    painter.setFont(normal);
  }
}

}  // namespace zb::view
