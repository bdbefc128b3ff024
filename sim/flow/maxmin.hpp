#pragma once
// Weighted max-min fair sharing by progressive filling (SimGrid's lmm idea), as a pure solver.
// Constraints are links with a capacity; variables are flows crossing some of them. All unfrozen
// variables grow together, variable i at rate lambda / weight_i (a flow with weight 2 gets half
// the share of a weight-1 flow on a common bottleneck). A constraint that fills up freezes its
// unfrozen variables; a variable that reaches its bound freezes alone. The result is the unique
// weighted max-min fair allocation: every variable either sits at its bound or crosses a
// saturated constraint on which no variable has a larger rate * weight.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <vector>

namespace trainsim::sim::flow {

// A sharing problem in compressed form (one flat array of constraint uses for all variables).
// Capacities and rates are in one unit of the caller's choice (the network uses bytes/s).
class MaxMinProblem {
 public:
  static constexpr double kUnbounded = std::numeric_limits<double>::infinity();

  // A constraint of `capacity` >= 0 (+inf allowed); returns its index.
  uint32_t add_constraint(double capacity);
  void set_capacity(uint32_t constraint, double capacity);
  // A variable crossing `constraints` (a constraint listed twice is used twice), with sharing
  // penalty `weight` > 0 and an upper `bound` >= 0 on its rate; returns its index.
  uint32_t add_variable(std::span<const uint32_t> constraints, double weight = 1.0, double bound = kUnbounded);
  uint32_t add_variable(std::initializer_list<uint32_t> constraints, double weight = 1.0, double bound = kUnbounded) {
    return add_variable(std::span<const uint32_t>(constraints.begin(), constraints.size()), weight, bound);
  }
  // As above, using usage[k] units of constraints[k] per unit of rate (k for a variable that
  // stands for k identical flows; 1 for an ordinary flow).
  uint32_t add_variable(std::span<const uint32_t> constraints, std::span<const double> usage, double weight = 1.0,
                        double bound = kUnbounded);
  // Empties the problem, keeping the allocated memory for the next one.
  void clear();
  void reserve(size_t constraints, size_t variables, size_t uses);

  size_t constraint_count() const { return capacity_.size(); }
  size_t variable_count() const { return weight_.size(); }
  double capacity(uint32_t c) const { return capacity_[c]; }
  double weight(uint32_t v) const { return weight_[v]; }
  double bound(uint32_t v) const { return bound_[v]; }
  std::span<const uint32_t> constraints_of(uint32_t v) const {
    return {uses_.data() + offsets_[v], offsets_[v + 1] - offsets_[v]};
  }
  // Usage coefficients of constraints_of(v), parallel to it.
  std::span<const double> usage_of(uint32_t v) const {
    return {usage_.data() + offsets_[v], offsets_[v + 1] - offsets_[v]};
  }

 private:
  std::vector<double> capacity_;
  std::vector<uint32_t> offsets_{0};  // variable v uses uses_[offsets_[v] .. offsets_[v + 1])
  std::vector<uint32_t> uses_;
  std::vector<double> usage_;  // parallel to uses_
  std::vector<double> weight_, bound_;
};

// Progressive filling with a heap of constraint fill levels: O((V + E) log C) per solve for V
// variables, C constraints and E uses. Keeps its buffers between solves, so a
// long-lived solver allocates nothing in steady state. Deterministic: no hashing, and the same
// problem always takes the same steps.
class MaxMinSolver {
 public:
  // Rates per variable into `rates` (resized). A variable that crosses no constraint gets its
  // bound; one that crosses only infinite constraints and has no bound gets +inf.
  void solve(const MaxMinProblem& p, std::vector<double>& rates);

 private:
  struct Level {  // the fill level at which a constraint saturates or a variable hits its bound
    double lambda;
    uint32_t index;  // of the constraint (heap) or the variable (bounded list)
  };
  static bool before(const Level& a, const Level& b);
  void sift_down(size_t hole);
  void pop_top();
  double fill_level(const MaxMinProblem& p, uint32_t c);
  void freeze(const MaxMinProblem& p, uint32_t v, double rate, std::vector<double>& rates);

  std::vector<uint32_t> con_offsets_, con_vars_;  // transposed uses: the variables of each constraint
  std::vector<double> slack_;                     // capacity minus the load of frozen variables
  std::vector<double> demand_;                    // sum of usage / weight over unfrozen variables
  std::vector<uint32_t> unfrozen_;                // unfrozen uses per constraint
  std::vector<uint8_t> saturated_, frozen_;
  std::vector<Level> heap_;     // 4-ary min-heap of constraint levels (lower bounds, see freeze)
  std::vector<Level> bounded_;  // (bound * weight, variable), sorted
};

// Convenience: one solve with a fresh solver.
std::vector<double> solve_maxmin(const MaxMinProblem& p);

}  // namespace trainsim::sim::flow
