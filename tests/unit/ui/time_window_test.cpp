#include "ui/scene/time_window.hpp"

#include <gtest/gtest.h>

namespace trainsim::ui {
namespace {

TEST(TimeWindow, ZoomKeepsTheAnchorInPlace) {
  TimeWindow w;
  w.reset(1e9);
  const double anchor = 2.5e8;
  const double x_before = w.to_x(anchor, 0, 1000);
  w.zoom(4, anchor);
  EXPECT_DOUBLE_EQ(w.width(), 2.5e8);
  EXPECT_NEAR(w.to_x(anchor, 0, 1000), x_before, 1e-9);
  EXPECT_NEAR(w.to_t(w.to_x(3e8, 0, 1000), 0, 1000), 3e8, 1e-3);
}

TEST(TimeWindow, StaysInsideTheSpanAndAboveTheMinimumWidth) {
  TimeWindow w;
  w.reset(1e6);
  w.zoom(1e9, 5e5);
  EXPECT_DOUBLE_EQ(w.width(), TimeWindow::kMinWidth);
  w.pan(1e12);
  EXPECT_DOUBLE_EQ(w.end(), 1e6);
  w.pan(-1e12);
  EXPECT_DOUBLE_EQ(w.begin(), 0);
  w.zoom(1e-9, 0);  // zooming out stops at the whole span
  EXPECT_DOUBLE_EQ(w.begin(), 0);
  EXPECT_DOUBLE_EQ(w.end(), 1e6);
  w.zoom(0, 0);  // ignored
  w.zoom(-2, 0);
  EXPECT_DOUBLE_EQ(w.width(), 1e6);
  w.show(9e5, 2e5);  // reversed: swapped
  EXPECT_DOUBLE_EQ(w.begin(), 2e5);
  EXPECT_DOUBLE_EQ(w.end(), 9e5);
}

}  // namespace
}  // namespace trainsim::ui
