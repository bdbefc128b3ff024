#include "ui/scene/time_window.hpp"

#include <algorithm>

namespace trainsim::ui {

void TimeWindow::reset(double span_ns) {
  span_ = std::max(span_ns, kMinWidth);
  t0_ = 0;
  t1_ = span_;
}

void TimeWindow::clamp() {
  double w = std::clamp(t1_ - t0_, kMinWidth, span_);
  t0_ = std::clamp(t0_, 0.0, span_ - w);
  t1_ = t0_ + w;
}

void TimeWindow::zoom(double factor, double anchor) {
  if (!(factor > 0)) return;
  anchor = std::clamp(anchor, t0_, t1_);
  const double w = std::clamp(width() / factor, kMinWidth, span_);
  const double share = (anchor - t0_) / width();
  t0_ = anchor - share * w;
  t1_ = t0_ + w;
  clamp();
}

void TimeWindow::pan(double dt) {
  t0_ += dt;
  t1_ += dt;
  clamp();
}

void TimeWindow::show(double a, double b) {
  if (b < a) std::swap(a, b);
  t0_ = a;
  t1_ = std::max(b, a + kMinWidth);
  clamp();
}

}  // namespace trainsim::ui
