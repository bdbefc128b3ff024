#pragma once
// Weighted max-min fair sharing by progressive filling (SimGrid's lmm idea): a pure function.
// Constraints are links with a capacity; variables are flows crossing some of them. All
// unfrozen variables grow together, a variable with weight w at rate lambda / w (a flow with
// weight 2 gets half the share of a weight-1 flow on a common bottleneck); a constraint that
// fills up freezes its variables, a variable that reaches its bound freezes alone.

#include <cstdint>
#include <limits>
#include <vector>

namespace trainsim::sim::flow {

struct MaxMinProblem {
  std::vector<double> capacity;  // per constraint (bytes/s), >= 0
  // Per variable: the constraints it crosses and how much of each it uses per unit of rate
  // (1 for an ordinary flow; k for a flow standing for k identical flows).
  std::vector<std::vector<uint32_t>> uses;
  std::vector<std::vector<double>> usage;  // empty = all 1
  std::vector<double> weight;              // empty = all 1 (sharing penalty)
  std::vector<double> bound;               // empty = unbounded
  static constexpr double kUnbounded = std::numeric_limits<double>::infinity();
};

// Rates per variable. A variable with no constraint gets its bound (kUnbounded if none).
std::vector<double> solve_maxmin(const MaxMinProblem& p);

}  // namespace trainsim::sim::flow
