// 1F1B (PipeDream-Flush, Narayanan et al. 2021): p - s - 1 warm-up forwards on stage s, then one
// forward and one backward alternately, then the remaining backwards.
#include <gtest/gtest.h>

#include "models/schedules/schedule.hpp"
#include "pipeline_replay.hpp"

namespace trainsim::models::schedules {
namespace {

const ScheduleInfo& one_f_one_b() { return ScheduleRegistry::instance().get("1f1b", "schedule"); }

Op F(int mb) { return Op{OpType::kF, mb, 0}; }
Op B(int mb) { return Op{OpType::kB, mb, 0}; }

TEST(OneFOneB, WarmUpSteadyStateAndDrain) {
  const StageOrders o = one_f_one_b().generate(3, 4, {1});
  // Stage 0: 2 warm-up forwards, then F2 B0 F3 B1, then B2 B3.
  EXPECT_EQ(o[0], (std::vector<Op>{F(0), F(1), F(2), B(0), F(3), B(1), B(2), B(3)}));
  EXPECT_EQ(o[1], (std::vector<Op>{F(0), F(1), B(0), F(2), B(1), F(3), B(2), B(3)}));
  // The last stage alternates from the start.
  EXPECT_EQ(o[2], (std::vector<Op>{F(0), B(0), F(1), B(1), F(2), B(2), F(3), B(3)}));
  // Fewer micro-batches than stages: warm-up is capped at m.
  EXPECT_EQ(one_f_one_b().generate(4, 2, {1})[0], (std::vector<Op>{F(0), F(1), B(0), B(1)}));
}

TEST(OneFOneB, InFlightIsMinOfPMinusSAndM) {
  for (const auto& [p, m] : {std::pair{4, 8}, std::pair{8, 4}, std::pair{8, 32}, std::pair{1, 3}, std::pair{5, 5}}) {
    const StageOrders o = one_f_one_b().generate(p, m, {1});
    for (int s = 0; s < p; ++s)
      EXPECT_EQ(pipeline::peak_in_flight(o[static_cast<size_t>(s)]), std::min(p - s, m)) << p << " " << m << " " << s;
  }
}

TEST(OneFOneB, BubbleIsPMinusOneOverMPlusPMinusOne) {
  // With F = 1 and B = 2 (backward twice the forward), 1F1B takes (m + p - 1)(F + B): the same
  // bubble as GPipe, (p - 1)/(m + p - 1) of the total, i.e. (p - 1)/m of the ideal time.
  for (const auto& [p, m] :
       {std::pair{4, 8}, std::pair{8, 32}, std::pair{2, 1}, std::pair{4, 4}, std::pair{8, 3}, std::pair{3, 7}}) {
    const pipeline::Replay r = pipeline::replay(one_f_one_b().generate(p, m, {1}), p, 1);
    ASSERT_FALSE(r.deadlock) << r.stuck;
    EXPECT_EQ(r.makespan, (m + p - 1) * 3) << p << " " << m;
    for (int s = 0; s < p; ++s) {
      const double bubble = 1.0 - static_cast<double>(r.busy[static_cast<size_t>(s)]) / static_cast<double>(r.makespan);
      EXPECT_NEAR(bubble, static_cast<double>(p - 1) / (m + p - 1), 1e-12) << p << " " << m << " stage " << s;
      EXPECT_NEAR(static_cast<double>(r.makespan - r.busy[static_cast<size_t>(s)]) / r.busy[static_cast<size_t>(s)],
                  static_cast<double>(p - 1) / m, 1e-12);
    }
  }
}

}  // namespace
}  // namespace trainsim::models::schedules
