// GPipe (Huang et al. 2019): all forwards, then all backwards in reverse order.
#include <gtest/gtest.h>

#include "models/schedules/schedule.hpp"
#include "pipeline_replay.hpp"

namespace trainsim::models::schedules {
namespace {

const ScheduleInfo& gpipe() { return ScheduleRegistry::instance().get("gpipe", "schedule"); }

TEST(GPipe, AllForwardsThenAllBackwardsInReverse) {
  const StageOrders o = gpipe().generate(3, 4, {1});
  const std::vector<Op> expected = {{OpType::kF, 0, 0}, {OpType::kF, 1, 0}, {OpType::kF, 2, 0}, {OpType::kF, 3, 0},
                                    {OpType::kB, 3, 0}, {OpType::kB, 2, 0}, {OpType::kB, 1, 0}, {OpType::kB, 0, 0}};
  for (const auto& stage : o) EXPECT_EQ(stage, expected);
}

TEST(GPipe, HoldsEveryMicroBatchInFlight) {
  for (const auto& [p, m] : {std::pair{4, 8}, std::pair{8, 4}, std::pair{1, 5}, std::pair{3, 1}}) {
    const StageOrders o = gpipe().generate(p, m, {1});
    for (int s = 0; s < p; ++s) EXPECT_EQ(pipeline::peak_in_flight(o[static_cast<size_t>(s)]), m) << p << " " << m;
  }
}

TEST(GPipe, BubbleIsPMinusOneOverMPlusPMinusOne) {
  // The forward wave takes (m + p - 1) F to drain through p stages, the backward wave
  // (m + p - 1) B: total (m + p - 1)(F + B), of which each stage is busy m (F + B).
  for (const auto& [p, m] : {std::pair{4, 8}, std::pair{8, 32}, std::pair{2, 1}, std::pair{8, 3}, std::pair{1, 4}})
    for (const auto& [f, b] : {std::pair<int64_t, int64_t>{1, 2}, std::pair<int64_t, int64_t>{3, 5}}) {
      const pipeline::Replay r = pipeline::replay(gpipe().generate(p, m, {1}), p, 1, f, b);
      ASSERT_FALSE(r.deadlock) << r.stuck;
      EXPECT_EQ(r.makespan, (m + p - 1) * (f + b)) << p << " " << m;
      for (int s = 0; s < p; ++s) {
        const double bubble =
            1.0 - static_cast<double>(r.busy[static_cast<size_t>(s)]) / static_cast<double>(r.makespan);
        EXPECT_NEAR(bubble, static_cast<double>(p - 1) / (m + p - 1), 1e-12) << p << " " << m << " stage " << s;
      }
    }
}

}  // namespace
}  // namespace trainsim::models::schedules
