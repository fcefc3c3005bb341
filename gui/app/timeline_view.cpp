// The timeline widget (see timeline_view.h).
#include "gui/app/timeline_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

#include "gui/app/qt_colour.h"
#include "gui/app/timeline_painter.h"

#ifdef ZB_HAVE_QT_SVG
#include <QBuffer>
#include <QSvgGenerator>
#endif

namespace zb::view {

TimelineView::TimelineView(QWidget* parent) : QWidget(parent), scene_(&empty_scene_) {
  setMouseTracking(false);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Minimum);
  setFocusPolicy(Qt::StrongFocus);
  relayout();
}

QSize TimelineView::sizeHint() const { return {900, static_cast<int>(std::ceil(layout_.height_px))}; }

void TimelineView::set_scene(const TimelineScene* scene) {
  scene_ = scene ? scene : &empty_scene_;
  scene_changed();
}

void TimelineView::scene_changed() {
  if (auto_fit_) refit();
  relayout();
}

void TimelineView::refit() {
  viewport_.fit(0, scene_->end_time(), plot_width(width(), style_));
}

void TimelineView::fit_to_window() {
  auto_fit_ = true;
  refit();
  relayout();
}

void TimelineView::zoom_by(double factor) {
  viewport_.zoom_at(layout_.plot.w / 2, factor);
  auto_fit_ = false;
  relayout();
}

void TimelineView::set_show_memory(bool show) {
  style_.show_memory = show;
  relayout();
}

void TimelineView::set_show_arrows(bool show) {
  style_.show_arrows = show;
  relayout();
}

void TimelineView::relayout() {
  layout_ = layout_timeline(*scene_, viewport_, std::max(width(), 1), style_);
  const int height = static_cast<int>(std::ceil(layout_.height_px));
  if (minimumHeight() != height) setMinimumHeight(height);
  update();
}

void TimelineView::paintEvent(QPaintEvent* event) {
  QPainter painter(this);
  paint_timeline(painter, layout_, QRectF(event->rect()));
}

void TimelineView::resizeEvent(QResizeEvent*) {
  if (auto_fit_) refit();
  relayout();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  if (event->modifiers() & Qt::ShiftModifier) {
    event->ignore();  // lets the surrounding scroll area scroll vertically
    return;
  }
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) return;
  viewport_.zoom_at(event->position().x() - layout_.plot.x, std::pow(1.25, steps));
  auto_fit_ = false;
  relayout();
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    drag_x_ = event->position().x();
    setCursor(Qt::ClosedHandCursor);
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (!drag_x_) return;
  const double x = event->position().x();
  viewport_.pan_px(x - *drag_x_);
  drag_x_ = x;
  auto_fit_ = false;
  relayout();
}

void TimelineView::mouseReleaseEvent(QMouseEvent*) {
  drag_x_.reset();
  unsetCursor();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*) { fit_to_window(); }

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    if (const BoxItem* box = hit_test(layout_, help->pos().x(), help->pos().y())) {
      const auto& group = scene_->groups().at(static_cast<std::size_t>(box->group));
      QToolTip::showText(help->globalPos(), qstr(describe_span(group, box->span)), this);
    } else if (const auto memory = hit_test_memory(layout_, *scene_, viewport_, help->pos().x(), help->pos().y())) {
      const auto& group = scene_->groups().at(static_cast<std::size_t>(memory->group));
      QToolTip::showText(help->globalPos(), qstr(describe_memory(group, *memory)), this);
    } else {
      QToolTip::hideText();
      event->ignore();
    }
    return true;
  }
  return QWidget::event(event);
}

QImage TimelineView::render_image() const {
  const QSize size(std::max(width(), 1), std::max(1, static_cast<int>(std::ceil(layout_.height_px))));
  QImage image(size, QImage::Format_RGB32);
  QPainter painter(&image);
  painter.setFont(font());
  paint_timeline(painter, layout_);
  return image;
}

bool TimelineView::svg_supported() {
#ifdef ZB_HAVE_QT_SVG
  return true;
#else
  return false;
#endif
}

QByteArray TimelineView::render_svg() const {
#ifdef ZB_HAVE_QT_SVG
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator generator;
  generator.setOutputDevice(&buffer);
  const int w = std::max(width(), 1);
  generator.setSize(QSize(w, static_cast<int>(std::ceil(layout_.height_px))));
  generator.setViewBox(QRectF(0, 0, w, layout_.height_px));
  generator.setTitle("zbview timeline");
  QPainter painter(&generator);
  painter.setFont(font());
  paint_timeline(painter, layout_);
  painter.end();
  return buffer.data();
#else
  return {};
#endif
}

}  // namespace zb::view
