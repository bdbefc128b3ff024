#include "sim/flow/maxmin.hpp"

#include <gtest/gtest.h>

#include <random>

namespace trainsim::sim::flow {
namespace {

TEST(MaxMin, TwoEqualFlowsOnOneLinkGetHalfEach) {
  MaxMinProblem p;
  p.capacity = {100.0};
  p.uses = {{0}, {0}};
  const auto r = solve_maxmin(p);
  EXPECT_DOUBLE_EQ(r[0], 50.0);
  EXPECT_DOUBLE_EQ(r[1], 50.0);
}

TEST(MaxMin, PenaltyTwoGetsAThird) {
  // SimGrid's first maxmin_test case: weights 1 and 2 on one link -> 2/3 and 1/3.
  MaxMinProblem p;
  p.capacity = {3.0};
  p.uses = {{0}, {0}};
  p.weight = {1.0, 2.0};
  const auto r = solve_maxmin(p);
  EXPECT_NEAR(r[0], 2.0, 1e-12);
  EXPECT_NEAR(r[1], 1.0, 1e-12);
}

TEST(MaxMin, AFlowBottleneckedElsewhereLeavesItsShare) {
  // Link 0 (cap 10) carries A and B; link 1 (cap 2) carries B only. B is held to 2 by link 1,
  // so A gets the 8 that remain on link 0, not 5.
  MaxMinProblem p;
  p.capacity = {10.0, 2.0};
  p.uses = {{0}, {0, 1}};
  const auto r = solve_maxmin(p);
  EXPECT_NEAR(r[0], 8.0, 1e-12);
  EXPECT_NEAR(r[1], 2.0, 1e-12);
}

TEST(MaxMin, ParkingLot) {
  // Three links of capacity 1 in a row; a long flow crosses all three, one short flow per link.
  // Every link is shared by two flows: everyone gets 1/2.
  MaxMinProblem p;
  p.capacity = {1.0, 1.0, 1.0};
  p.uses = {{0, 1, 2}, {0}, {1}, {2}};
  for (double r : solve_maxmin(p)) EXPECT_NEAR(r, 0.5, 1e-12);
}

TEST(MaxMin, BoundsAndUsageCoefficients) {
  MaxMinProblem p;
  p.capacity = {10.0};
  p.uses = {{0}, {0}, {}};
  p.bound = {1.0, MaxMinProblem::kUnbounded, 7.0};
  auto r = solve_maxmin(p);
  EXPECT_NEAR(r[0], 1.0, 1e-12);  // capped by its bound
  EXPECT_NEAR(r[1], 9.0, 1e-12);  // takes the rest
  EXPECT_EQ(r[2], 7.0);           // no link: its bound
  // A variable standing for 4 identical flows uses 4 units of the link per unit of rate.
  MaxMinProblem q;
  q.capacity = {10.0};
  q.uses = {{0}, {0}};
  q.usage = {{4.0}, {1.0}};
  r = solve_maxmin(q);
  EXPECT_NEAR(r[0], 2.0, 1e-12);  // 4 x 2 + 2 = 10: five flows of 2 each
  EXPECT_NEAR(r[1], 2.0, 1e-12);
}

TEST(MaxMin, ZeroCapacityStallsItsFlows) {
  MaxMinProblem p;
  p.capacity = {0.0, 5.0};
  p.uses = {{0, 1}, {1}};
  const auto r = solve_maxmin(p);
  EXPECT_EQ(r[0], 0.0);
  EXPECT_NEAR(r[1], 5.0, 1e-12);
}

TEST(MaxMin, RandomInstancesAreFeasibleAndMaxMinFair) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    MaxMinProblem p;
    const int nl = 1 + static_cast<int>(rng() % 8), nf = 1 + static_cast<int>(rng() % 12);
    for (int l = 0; l < nl; ++l) p.capacity.push_back(1.0 + static_cast<double>(rng() % 100));
    for (int f = 0; f < nf; ++f) {
      std::vector<uint32_t> u;
      for (int l = 0; l < nl; ++l)
        if (rng() % 3 == 0) u.push_back(static_cast<uint32_t>(l));
      if (u.empty()) u.push_back(static_cast<uint32_t>(rng() % static_cast<uint64_t>(nl)));
      p.uses.push_back(u);
    }
    const auto r = solve_maxmin(p);
    std::vector<double> load(static_cast<size_t>(nl), 0.0);
    for (int f = 0; f < nf; ++f)
      for (uint32_t l : p.uses[static_cast<size_t>(f)]) load[l] += r[static_cast<size_t>(f)];
    for (int l = 0; l < nl; ++l)
      EXPECT_LE(load[static_cast<size_t>(l)], p.capacity[static_cast<size_t>(l)] * (1 + 1e-9));
    // Max-min fairness: every flow crosses a saturated link on which no flow has a higher rate.
    for (int f = 0; f < nf; ++f) {
      bool has_bottleneck = false;
      for (uint32_t l : p.uses[static_cast<size_t>(f)]) {
        if (load[l] < p.capacity[l] * (1 - 1e-9)) continue;
        bool is_max = true;
        for (int g = 0; g < nf; ++g)
          for (uint32_t m : p.uses[static_cast<size_t>(g)])
            if (m == l && r[static_cast<size_t>(g)] > r[static_cast<size_t>(f)] * (1 + 1e-9)) is_max = false;
        has_bottleneck = has_bottleneck || is_max;
      }
      EXPECT_TRUE(has_bottleneck) << "trial " << trial << " flow " << f;
    }
  }
}

}  // namespace
}  // namespace trainsim::sim::flow
