#include "planner/search/pareto.hpp"

#include <gtest/gtest.h>

namespace trainsim::planner::search {
namespace {

TEST(Pareto, KeepsPointsNoOtherBeatsInBothFastestFirst) {
  // (time, memory): c is beaten by a on both; d ties a exactly (a kept: earlier); e is slower but smaller.
  const std::vector<TimeMemory> pts = {{1.0, 50.0, 0}, {2.0, 40.0, 1}, {1.5, 60.0, 2}, {1.0, 50.0, 3}, {3.0, 10.0, 4}};
  const auto front = pareto_time_memory(pts, [](size_t a, size_t b) { return a < b; });
  EXPECT_EQ(front, (std::vector<size_t>{0, 1, 4}));
}

TEST(Pareto, EqualTimesKeepTheSmallerMemory) {
  const auto front =
      pareto_time_memory({{1.0, 50.0, 0}, {1.0, 30.0, 1}, {2.0, 30.0, 2}}, [](size_t a, size_t b) { return a < b; });
  EXPECT_EQ(front, (std::vector<size_t>{1}));
}

TEST(Pareto, EmptyInEmptyOut) {
  EXPECT_TRUE(pareto_time_memory({}, [](size_t, size_t) { return false; }).empty());
}

}  // namespace
}  // namespace trainsim::planner::search
