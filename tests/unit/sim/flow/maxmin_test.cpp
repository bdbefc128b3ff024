#include "sim/flow/maxmin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace trainsim::sim::flow {
namespace {

constexpr double kInf = MaxMinProblem::kUnbounded;

TEST(MaxMin, TwoEqualFlowsOnOneLinkGetHalfEach) {
  // One link of 100, two identical flows: progressive filling raises both to 50 together.
  MaxMinProblem p;
  const uint32_t l = p.add_constraint(100.0);
  p.add_variable({l});
  p.add_variable({l});
  const auto r = solve_maxmin(p);
  EXPECT_DOUBLE_EQ(r[0], 50.0);
  EXPECT_DOUBLE_EQ(r[1], 50.0);
}

TEST(MaxMin, PenaltyTwoGetsAThird) {
  // SimGrid's first maxmin_test case. Rates are lambda / weight: lambda + lambda / 2 = 3 fills
  // the link at lambda = 2, so the weight-1 flow gets 2 (two thirds) and the weight-2 flow 1.
  MaxMinProblem p;
  const uint32_t l = p.add_constraint(3.0);
  p.add_variable({l}, 1.0);
  p.add_variable({l}, 2.0);
  const auto r = solve_maxmin(p);
  EXPECT_DOUBLE_EQ(r[0], 2.0);
  EXPECT_DOUBLE_EQ(r[1], 1.0);
}

TEST(MaxMin, AFlowBottleneckedElsewhereLeavesItsShare) {
  // Three links. A crosses L0 and L1, B crosses L0 only, C crosses L1 and L2, D crosses L2 only.
  // Capacities L0 = 1, L1 = 2, L2 = 2.
  //   L0 (A, B) fills first at lambda = 0.5: A = B = 0.5.
  //   Then C and D rise. L2 (C, D) holds 2 * lambda and fills at lambda = 1; L1 holds
  //   A + C = 0.5 + lambda and would fill only at 1.5. So C = D = 1.
  // A's share of L1 (it cannot use more than 0.5) goes to C; L1 is left with 0.5 unused, which
  // nobody can take because C is held by L2.
  MaxMinProblem p;
  const uint32_t l0 = p.add_constraint(1.0), l1 = p.add_constraint(2.0), l2 = p.add_constraint(2.0);
  p.add_variable({l0, l1});
  p.add_variable({l0});
  p.add_variable({l1, l2});
  p.add_variable({l2});
  const auto r = solve_maxmin(p);
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 1.0);
  EXPECT_DOUBLE_EQ(r[3], 1.0);
}

TEST(MaxMin, ParkingLot) {
  // Three links of capacity 1 in a row; a long flow crosses all three, one short flow per link.
  // Every link is shared by two flows and they all fill at lambda = 0.5: everyone gets 1/2.
  MaxMinProblem p;
  for (int i = 0; i < 3; ++i) p.add_constraint(1.0);
  p.add_variable({0, 1, 2});
  p.add_variable({0});
  p.add_variable({1});
  p.add_variable({2});
  for (const double r : solve_maxmin(p)) EXPECT_DOUBLE_EQ(r, 0.5);

  // Capacities 1, 2, 3: the first link fills at 0.5 and freezes the long flow there; the short
  // flows on the other links then take what the long flow leaves: 2 - 0.5 and 3 - 0.5.
  MaxMinProblem q;
  q.add_constraint(1.0);
  q.add_constraint(2.0);
  q.add_constraint(3.0);
  q.add_variable({0, 1, 2});
  q.add_variable({0});
  q.add_variable({1});
  q.add_variable({2});
  const auto r = solve_maxmin(q);
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 1.5);
  EXPECT_DOUBLE_EQ(r[3], 2.5);
}

TEST(MaxMin, BoundLimitedFlowLeavesTheRest) {
  // Link of 10 with three flows, one bounded at 1. All rise together; at lambda = 1 the bounded
  // one stops, the other two share the remaining 9: 4.5 each.
  MaxMinProblem p;
  const uint32_t l = p.add_constraint(10.0);
  p.add_variable({l}, 1.0, 1.0);
  p.add_variable({l});
  p.add_variable({l});
  const auto r = solve_maxmin(p);
  EXPECT_DOUBLE_EQ(r[0], 1.0);
  EXPECT_DOUBLE_EQ(r[1], 4.5);
  EXPECT_DOUBLE_EQ(r[2], 4.5);
}

TEST(MaxMin, BoundAboveTheFairShareDoesNotBind) {
  // Bound 6 on a link of 10 shared with one other flow: the fair share 5 is below it.
  MaxMinProblem p;
  const uint32_t l = p.add_constraint(10.0);
  p.add_variable({l}, 1.0, 6.0);
  p.add_variable({l});
  const auto r = solve_maxmin(p);
  EXPECT_DOUBLE_EQ(r[0], 5.0);
  EXPECT_DOUBLE_EQ(r[1], 5.0);
}

TEST(MaxMin, FlowsWithoutLinksGetTheirBound) {
  MaxMinProblem p;
  p.add_variable(std::span<const uint32_t>{}, 1.0, 7.0);
  p.add_variable(std::span<const uint32_t>{});
  const auto r = solve_maxmin(p);
  EXPECT_EQ(r[0], 7.0);
  EXPECT_EQ(r[1], kInf);  // reported as its (infinite) bound
}

TEST(MaxMin, ZeroCapacityStallsItsFlowsOnly) {
  // L0 has failed (capacity 0): A, which crosses it, gets 0 and leaves all of L1 to B.
  MaxMinProblem p;
  const uint32_t l0 = p.add_constraint(0.0), l1 = p.add_constraint(5.0);
  p.add_variable({l0, l1});
  p.add_variable({l1});
  const auto r = solve_maxmin(p);
  EXPECT_EQ(r[0], 0.0);
  EXPECT_DOUBLE_EQ(r[1], 5.0);
}

TEST(MaxMin, InfiniteCapacity) {
  // An infinite link never limits: A is held by its bound, B by the finite link it also crosses,
  // C crosses only the infinite link and has no bound.
  MaxMinProblem p;
  const uint32_t inf = p.add_constraint(kInf), fin = p.add_constraint(4.0);
  p.add_variable({inf}, 1.0, 3.0);
  p.add_variable({inf, fin});
  p.add_variable({inf});
  const auto r = solve_maxmin(p);
  EXPECT_EQ(r[0], 3.0);
  EXPECT_EQ(r[1], 4.0);
  EXPECT_EQ(r[2], kInf);
}

TEST(MaxMin, UsageCoefficientsAndRepeatedLinks) {
  // A variable standing for 4 identical flows uses 4 units per unit of rate: 4 x + x = 10 gives
  // x = 2, as for five separate flows of 2 each.
  MaxMinProblem p;
  const uint32_t l = p.add_constraint(10.0);
  const uint32_t cons[] = {l};
  const double four[] = {4.0};
  p.add_variable(cons, four);
  p.add_variable({l});
  auto r = solve_maxmin(p);
  EXPECT_DOUBLE_EQ(r[0], 2.0);
  EXPECT_DOUBLE_EQ(r[1], 2.0);
  // A route that crosses a link twice uses it twice: 2 x + x = 9 gives x = 3.
  MaxMinProblem q;
  q.add_constraint(9.0);
  q.add_variable({0, 0});
  q.add_variable({0});
  r = solve_maxmin(q);
  EXPECT_DOUBLE_EQ(r[0], 3.0);
  EXPECT_DOUBLE_EQ(r[1], 3.0);
}

TEST(MaxMin, SolverReuseGivesTheSameAnswer) {
  MaxMinSolver solver;
  MaxMinProblem p;
  std::vector<double> a, b;
  p.add_constraint(3.0);
  p.add_variable({0}, 1.0);
  p.add_variable({0}, 2.0);
  solver.solve(p, a);
  // A different problem in between must leave nothing behind.
  MaxMinProblem q;
  q.add_constraint(1.0);
  q.add_constraint(0.0);
  for (int i = 0; i < 5; ++i) q.add_variable({0, 1});
  std::vector<double> junk;
  solver.solve(q, junk);
  solver.solve(p, b);
  EXPECT_EQ(a, b);
  p.clear();
  EXPECT_EQ(p.variable_count(), 0u);
  EXPECT_EQ(p.constraint_count(), 0u);
}

// A deliberately naive progressive filling (one scan of everything per step) to compare with.
std::vector<double> reference_solve(const MaxMinProblem& p) {
  const size_t nv = p.variable_count(), nc = p.constraint_count();
  std::vector<double> rate(nv, 0.0);
  std::vector<bool> frozen(nv, false), saturated(nc, false);
  for (uint32_t v = 0; v < nv; ++v)
    if (p.constraints_of(v).empty()) rate[v] = p.bound(v), frozen[v] = true;
  for (;;) {
    double lambda = kInf;  // smallest level at which something stops
    for (uint32_t c = 0; c < nc; ++c) {
      double frozen_load = 0, demand = 0;
      for (uint32_t v = 0; v < nv; ++v) {
        const auto cons = p.constraints_of(v);
        const auto use = static_cast<double>(std::count(cons.begin(), cons.end(), c));
        if (frozen[v])
          frozen_load += use * rate[v];
        else
          demand += use / p.weight(v);
      }
      if (demand > 0) lambda = std::min(lambda, (p.capacity(c) - frozen_load) / demand);
    }
    for (uint32_t v = 0; v < nv; ++v)
      if (!frozen[v]) lambda = std::min(lambda, p.bound(v) * p.weight(v));
    bool any = false;
    for (uint32_t v = 0; v < nv; ++v)
      if (!frozen[v]) rate[v] = std::min(lambda / p.weight(v), p.bound(v)), any = true;
    if (!any) break;
    // Freeze the variables at their bound and those on constraints that are now full.
    std::vector<bool> now(nv, false);
    for (uint32_t c = 0; c < nc; ++c) {
      double load = 0;
      bool has_unfrozen = false;
      for (uint32_t v = 0; v < nv; ++v)
        for (const uint32_t k : p.constraints_of(v))
          if (k == c) load += rate[v], has_unfrozen = has_unfrozen || !frozen[v];
      if (has_unfrozen && load >= p.capacity(c) * (1 - 1e-12))
        for (uint32_t v = 0; v < nv; ++v)
          for (const uint32_t k : p.constraints_of(v))
            if (k == c) now[v] = true;
    }
    for (uint32_t v = 0; v < nv; ++v)
      if (!frozen[v] && (now[v] || rate[v] >= p.bound(v) * (1 - 1e-12))) frozen[v] = true;
  }
  return rate;
}

TEST(MaxMin, RandomInstancesAreFeasibleAndWeightedMaxMinFair) {
  std::mt19937_64 rng(7);
  MaxMinSolver solver;
  std::vector<double> r;
  for (int trial = 0; trial < 500; ++trial) {
    MaxMinProblem p;
    const auto nl = static_cast<uint32_t>(1 + rng() % 8), nf = static_cast<uint32_t>(1 + rng() % 16);
    for (uint32_t l = 0; l < nl; ++l) p.add_constraint(rng() % 10 == 0 ? 0.0 : 1.0 + static_cast<double>(rng() % 100));
    for (uint32_t f = 0; f < nf; ++f) {
      std::vector<uint32_t> u;
      for (uint32_t l = 0; l < nl; ++l)
        if (rng() % 3 == 0) u.push_back(l);
      if (u.empty()) u.push_back(static_cast<uint32_t>(rng() % nl));
      const double weight = rng() % 2 ? 1.0 : 0.5 + static_cast<double>(rng() % 8) * 0.5;
      const double bound = rng() % 4 == 0 ? static_cast<double>(rng() % 30) : kInf;
      p.add_variable(u, weight, bound);
    }
    solver.solve(p, r);
    ASSERT_EQ(r.size(), nf);
    // Feasibility: no link over capacity, no flow over its bound, no negative rate.
    std::vector<double> load(nl, 0.0);
    for (uint32_t f = 0; f < nf; ++f) {
      EXPECT_GE(r[f], 0.0);
      EXPECT_LE(r[f], p.bound(f));
      for (const uint32_t l : p.constraints_of(f)) load[l] += r[f];
    }
    for (uint32_t l = 0; l < nl; ++l) EXPECT_LE(load[l], p.capacity(l) * (1 + 1e-9) + 1e-12) << "trial " << trial;
    // Weighted max-min fairness: every flow sits at its bound, or crosses a saturated link on
    // which no flow has a larger rate * weight (so raising it would lower a poorer flow).
    for (uint32_t f = 0; f < nf; ++f) {
      if (r[f] >= p.bound(f) * (1 - 1e-9)) continue;
      bool has_bottleneck = false;
      for (const uint32_t l : p.constraints_of(f)) {
        if (load[l] < p.capacity(l) * (1 - 1e-9)) continue;
        bool is_max = true;
        for (uint32_t g = 0; g < nf; ++g)
          for (const uint32_t m : p.constraints_of(g))
            if (m == l && r[g] * p.weight(g) > r[f] * p.weight(f) * (1 + 1e-9) + 1e-12) is_max = false;
        has_bottleneck = has_bottleneck || is_max;
      }
      EXPECT_TRUE(has_bottleneck) << "trial " << trial << " flow " << f;
    }
    // The max-min allocation is unique: the naive solver must agree.
    const auto ref = reference_solve(p);
    for (uint32_t f = 0; f < nf; ++f) EXPECT_NEAR(r[f], ref[f], 1e-9 * std::max(1.0, ref[f])) << "trial " << trial;
  }
}

TEST(MaxMin, DeterministicAcrossRuns) {
  auto build = [] {
    std::mt19937_64 rng(11);
    MaxMinProblem p;
    for (int l = 0; l < 50; ++l) p.add_constraint(1.0 + static_cast<double>(rng() % 7));
    for (int f = 0; f < 2000; ++f) {
      const uint32_t u[] = {static_cast<uint32_t>(rng() % 50), static_cast<uint32_t>(rng() % 50)};
      p.add_variable(u, 1.0 + static_cast<double>(rng() % 3));
    }
    return p;
  };
  EXPECT_EQ(solve_maxmin(build()), solve_maxmin(build()));
}

}  // namespace
}  // namespace trainsim::sim::flow
