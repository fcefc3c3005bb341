// The horizontal view of the timeline: which time is at the plot's left edge and how many pixels a
// time unit takes; zoom about a point, pan by pixels, fit a time range into a width.
#pragma once

namespace zb::view {

class Viewport {
 public:
  Viewport() = default;
  Viewport(double time_start, double px_per_time) : time_start_(time_start), px_per_time_(px_per_time) {}

  double time_start() const { return time_start_; }
  double px_per_time() const { return px_per_time_; }

  // Pixel offset from the plot's left edge of time t, and back.
  double x_of(double time) const { return (time - time_start_) * px_per_time_; }
  double time_of(double x_px) const { return time_start_ + x_px / px_per_time_; }

  // Shows [t0, t1] across width_px with a small margin on both sides; a degenerate range shows 1 unit.
  void fit(double t0, double t1, double width_px);
  // Multiplies the scale by `factor` keeping the time under x_px where it is (wheel zoom).
  void zoom_at(double x_px, double factor);
  // Moves the content right by dx_px (dragging to the right shows earlier times).
  void pan_px(double dx_px);

  friend bool operator==(const Viewport&, const Viewport&) = default;

 private:
  double time_start_ = 0;
  double px_per_time_ = 1;
};

}  // namespace zb::view
