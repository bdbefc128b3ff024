#pragma once
// The schedule and memory views' visible time range: zoom about a point, pan, map to pixels.
// Kept inside [0, span] and at least kMinWidth wide, so no input can make it empty or inverted.

#include <cstdint>

namespace trainsim::ui {

class TimeWindow {
 public:
  static constexpr double kMinWidth = 1000;  // ns: 1 us

  void reset(double span_ns);
  double begin() const { return t0_; }
  double end() const { return t1_; }
  double width() const { return t1_ - t0_; }
  double span() const { return span_; }
  // Zooms by `factor` (> 1 in, < 1 out) keeping time `anchor_ns` where it is on screen.
  void zoom(double factor, double anchor_ns);
  // Moves by `dt_ns` (positive: later).
  void pan(double dt_ns);
  // Shows [a, b] (clamped).
  void show(double a_ns, double b_ns);
  // Pixel x of time t on a plot starting at x0, w pixels wide, and back.
  double to_x(double t_ns, double x0, double w) const { return x0 + (t_ns - t0_) / width() * w; }
  double to_t(double x, double x0, double w) const { return t0_ + (x - x0) / w * width(); }

 private:
  void clamp();
  double span_ = 1, t0_ = 0, t1_ = 1;
};

}  // namespace trainsim::ui
