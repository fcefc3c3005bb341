// The timeline widget: paints the layout of a scene; wheel zooms about the cursor, dragging pans,
// double-click fits; tooltips name the action under the cursor.
#pragma once

#include <QByteArray>
#include <QImage>
#include <QString>
#include <QWidget>

#include <optional>

#include "gui/viewer_core/timeline_layout.h"
#include "gui/viewer_core/timeline_scene.h"
#include "gui/viewer_core/viewport.h"

namespace zb::view {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  // The scene is owned by the caller and must outlive the view (or be replaced first).
  void set_scene(const TimelineScene* scene);
  // Call after the scene's content changed.
  void scene_changed();

  void fit_to_window();
  // Zooms about the middle of the plot (keyboard and menu zoom).
  void zoom_by(double factor);
  void set_show_memory(bool show);
  void set_show_arrows(bool show);
  bool auto_fit() const { return auto_fit_; }

  const TimelineLayout& layout() const { return layout_; }
  const Viewport& viewport() const { return viewport_; }
  const LayoutStyle& style() const { return style_; }

  // The view as an image at its current width and its full height (all groups).
  QImage render_image() const;
  // The view as SVG text; empty when zbview was built without Qt6 Svg.
  QByteArray render_svg() const;
  static bool svg_supported();

  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  void relayout();
  void refit();

  const TimelineScene* scene_ = nullptr;
  TimelineScene empty_scene_;
  Viewport viewport_;
  LayoutStyle style_;
  TimelineLayout layout_;
  bool auto_fit_ = true;  // refit whenever the scene changes, until the user zooms or pans
  std::optional<double> drag_x_;
};

}  // namespace zb::view
