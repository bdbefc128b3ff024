// Interleaved 1F1B (Narayanan et al. SC'21 Sec 2.2.2; Megatron-LM's
// forward_backward_pipelining_with_interleaving): v model chunks per rank.
#include <gtest/gtest.h>

#include "models/schedules/schedule.hpp"
#include "pipeline_replay.hpp"

namespace trainsim::models::schedules {
namespace {

const ScheduleInfo& interleaved() { return ScheduleRegistry::instance().get("interleaved", "schedule"); }

TEST(Interleaved, MicroBatchesAdvanceInGroupsOfPThroughTheChunks) {
  // p = 2, v = 2, m = 4. Forward k of a rank: micro-batch (k / (p v)) p + k % p, chunk
  // (k % (p v)) / p. Backwards visit the chunks in reverse.
  const StageOrders o = interleaved().generate(2, 4, {2});
  std::vector<Op> fwd, bwd;
  for (const Op& op : o[0]) (op.type == OpType::kF ? fwd : bwd).push_back(op);
  EXPECT_EQ(fwd, (std::vector<Op>{{OpType::kF, 0, 0},
                                  {OpType::kF, 1, 0},
                                  {OpType::kF, 0, 1},
                                  {OpType::kF, 1, 1},
                                  {OpType::kF, 2, 0},
                                  {OpType::kF, 3, 0},
                                  {OpType::kF, 2, 1},
                                  {OpType::kF, 3, 1}}));
  EXPECT_EQ(bwd, (std::vector<Op>{{OpType::kB, 0, 1},
                                  {OpType::kB, 1, 1},
                                  {OpType::kB, 0, 0},
                                  {OpType::kB, 1, 0},
                                  {OpType::kB, 2, 1},
                                  {OpType::kB, 3, 1},
                                  {OpType::kB, 2, 0},
                                  {OpType::kB, 3, 0}}));
}

TEST(Interleaved, InFlightPeaks) {
  // Warm-up on stage s: (p - s - 1) x 2 + (v - 1) x p forwards, then one more before the first
  // backward: peak (p - s - 1) x 2 + (v - 1) x p + 1, capped at the m v chunks.
  for (const auto& [p, m, v] : {std::tuple{4, 8, 2}, std::tuple{4, 16, 2}, std::tuple{4, 8, 3}, std::tuple{8, 16, 2},
                                std::tuple{2, 4, 4}, std::tuple{3, 6, 2}}) {
    const StageOrders o = interleaved().generate(p, m, {v});
    for (int s = 0; s < p; ++s)
      EXPECT_EQ(pipeline::peak_in_flight(o[static_cast<size_t>(s)]), std::min((p - s - 1) * 2 + (v - 1) * p + 1, m * v))
          << "p" << p << " m" << m << " v" << v << " stage " << s;
  }
  // m = p: Megatron runs every forward first (no steady state): all m v chunks in flight.
  for (const auto& [p, v] : {std::pair{4, 2}, std::pair{2, 3}}) {
    const StageOrders o = interleaved().generate(p, p, {v});
    for (int s = 0; s < p; ++s) EXPECT_EQ(pipeline::peak_in_flight(o[static_cast<size_t>(s)]), p * v);
  }
}

TEST(Interleaved, BubbleShrinksByTheNumberOfChunks) {
  // Each chunk's F takes 1 and B 2 (a chunk is 1/v of the stage's layers, so v chunks hold the
  // same work as one 1F1B stage with v-times larger ops). The bubble stays (p - 1)(F + B), so it
  // is (p - 1)/(v m) of the ideal time, (p - 1)/(v m + p - 1) of the total.
  for (const auto& [p, m, v] : {std::tuple{4, 8, 2}, std::tuple{4, 16, 2}, std::tuple{4, 8, 4}, std::tuple{8, 16, 2},
                                std::tuple{2, 8, 3}, std::tuple{3, 9, 2}}) {
    const pipeline::Replay r = pipeline::replay(interleaved().generate(p, m, {v}), p, v);
    ASSERT_FALSE(r.deadlock) << r.stuck;
    const int64_t ideal = static_cast<int64_t>(m) * v * 3;
    EXPECT_EQ(r.busy[0], ideal);
    EXPECT_EQ(r.makespan - ideal, (p - 1) * 3) << "p" << p << " m" << m << " v" << v;
    const double bubble = 1.0 - static_cast<double>(r.busy[0]) / static_cast<double>(r.makespan);
    EXPECT_NEAR(bubble, static_cast<double>(p - 1) / (v * m + p - 1), 1e-12);
  }
}

}  // namespace
}  // namespace trainsim::models::schedules
