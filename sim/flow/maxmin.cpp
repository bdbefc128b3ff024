#include "sim/flow/maxmin.hpp"

#include <algorithm>
#include <cmath>

#include "sim/error.hpp"

namespace trainsim::sim::flow {

namespace {
constexpr size_t kArity = 4;  // a 4-ary heap: shallower than binary, children share a cache line
}  // namespace

uint32_t MaxMinProblem::add_constraint(double capacity) {
  TRAINSIM_ASSERT(capacity >= 0.0, "constraint capacity must be >= 0, got ", capacity);
  capacity_.push_back(capacity);
  return static_cast<uint32_t>(capacity_.size() - 1);
}

void MaxMinProblem::set_capacity(uint32_t constraint, double capacity) {
  TRAINSIM_ASSERT(constraint < capacity_.size(), "unknown constraint ", constraint);
  TRAINSIM_ASSERT(capacity >= 0.0, "constraint capacity must be >= 0, got ", capacity);
  capacity_[constraint] = capacity;
}

uint32_t MaxMinProblem::add_variable(std::span<const uint32_t> constraints, double weight, double bound) {
  TRAINSIM_ASSERT(weight > 0.0 && std::isfinite(weight), "variable weight must be positive, got ", weight);
  TRAINSIM_ASSERT(bound >= 0.0, "variable bound must be >= 0, got ", bound);
  for (const uint32_t c : constraints) {
    TRAINSIM_ASSERT(c < capacity_.size(), "unknown constraint ", c);
    uses_.push_back(c);
    usage_.push_back(1.0);
  }
  offsets_.push_back(static_cast<uint32_t>(uses_.size()));
  weight_.push_back(weight);
  bound_.push_back(bound);
  return static_cast<uint32_t>(weight_.size() - 1);
}

uint32_t MaxMinProblem::add_variable(std::span<const uint32_t> constraints, std::span<const double> usage,
                                     double weight, double bound) {
  TRAINSIM_ASSERT(usage.size() == constraints.size(), "one usage coefficient per constraint");
  const uint32_t v = add_variable(constraints, weight, bound);
  for (size_t k = 0; k < usage.size(); ++k) {
    TRAINSIM_ASSERT(usage[k] > 0.0 && std::isfinite(usage[k]), "usage must be positive, got ", usage[k]);
    usage_[offsets_[v] + k] = usage[k];
  }
  return v;
}

void MaxMinProblem::clear() {
  capacity_.clear();
  offsets_.assign(1, 0);
  uses_.clear();
  usage_.clear();
  weight_.clear();
  bound_.clear();
}

void MaxMinProblem::reserve(size_t constraints, size_t variables, size_t uses) {
  capacity_.reserve(constraints);
  offsets_.reserve(variables + 1);
  weight_.reserve(variables);
  bound_.reserve(variables);
  uses_.reserve(uses);
  usage_.reserve(uses);
}

// Heap order: by level only. Equal levels come out in an order fixed by the (deterministic)
// sequence of heap operations, and which of two equal levels goes first does not change the rates.
bool MaxMinSolver::before(const Level& a, const Level& b) { return a.lambda < b.lambda; }

void MaxMinSolver::sift_down(size_t hole) {
  const size_t n = heap_.size();
  const Level e = heap_[hole];
  for (;;) {
    const size_t first = hole * kArity + 1;
    if (first >= n) break;
    size_t best = first;
    for (size_t k = first + 1; k < std::min(first + kArity, n); ++k)
      if (before(heap_[k], heap_[best])) best = k;
    if (!before(heap_[best], e)) break;
    heap_[hole] = heap_[best];
    hole = best;
  }
  heap_[hole] = e;
}

void MaxMinSolver::pop_top() {
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

// The level at which constraint c fills given its current slack and unfrozen demand.
double MaxMinSolver::fill_level(const MaxMinProblem& p, uint32_t c) {
  if (!(demand_[c] > 0.0)) {
    // Cancellation left no positive demand while unfrozen uses remain: sum it afresh.
    double d = 0.0;
    for (uint32_t k = con_offsets_[c]; k < con_offsets_[c + 1]; ++k) {
      const uint32_t v = con_vars_[k];
      if (frozen_[v]) continue;
      const auto cons = p.constraints_of(v);
      for (size_t j = 0; j < cons.size(); ++j)
        if (cons[j] == c) d += p.usage_of(v)[j] / p.weight(v);
    }
    demand_[c] = d;
  }
  return std::max(slack_[c], 0.0) / demand_[c];
}

// Freezes variable v at `rate`: its load moves from the constraints' demand to their slack. The
// heap keeps the constraints' older levels, which are lower bounds (levels never decrease); they
// are re-evaluated when they reach the top.
void MaxMinSolver::freeze(const MaxMinProblem& p, uint32_t v, double rate, std::vector<double>& rates) {
  frozen_[v] = 1;
  rates[v] = rate;
  const auto cons = p.constraints_of(v);
  const auto usage = p.usage_of(v);
  const double w = p.weight(v);
  for (size_t k = 0; k < cons.size(); ++k) {
    const uint32_t c = cons[k];
    if (saturated_[c]) continue;
    if (!std::isinf(slack_[c])) slack_[c] -= usage[k] * rate;
    if (--unfrozen_[c] == 0)
      demand_[c] = 0.0;  // exactly: no rounding residue keeps an empty constraint alive
    else
      demand_[c] -= usage[k] / w;
  }
}

void MaxMinSolver::solve(const MaxMinProblem& p, std::vector<double>& rates) {
  const auto nv = static_cast<uint32_t>(p.variable_count());
  const auto nc = static_cast<uint32_t>(p.constraint_count());
  rates.assign(nv, 0.0);
  frozen_.assign(nv, 0);
  slack_.resize(nc);
  demand_.assign(nc, 0.0);
  unfrozen_.assign(nc, 0);
  saturated_.assign(nc, 0);
  heap_.clear();
  bounded_.clear();

  // Transpose the uses (counting sort keeps variables in index order within a constraint).
  con_offsets_.assign(nc + 1, 0);
  for (uint32_t v = 0; v < nv; ++v)
    for (const uint32_t c : p.constraints_of(v)) ++con_offsets_[c + 1];
  for (uint32_t c = 0; c < nc; ++c) con_offsets_[c + 1] += con_offsets_[c];
  con_vars_.resize(con_offsets_[nc]);
  for (uint32_t v = 0; v < nv; ++v) {
    const auto cons = p.constraints_of(v);
    const auto usage = p.usage_of(v);
    if (cons.empty()) {  // nothing to share: the bound alone decides
      rates[v] = p.bound(v);
      frozen_[v] = 1;
      continue;
    }
    for (size_t k = 0; k < cons.size(); ++k) {
      const uint32_t c = cons[k];
      con_vars_[con_offsets_[c] + unfrozen_[c]++] = v;
      demand_[c] += usage[k] / p.weight(v);
    }
    if (p.bound(v) < MaxMinProblem::kUnbounded) bounded_.push_back({p.bound(v) * p.weight(v), v});
  }
  for (uint32_t c = 0; c < nc; ++c) {
    slack_[c] = p.capacity(c);
    if (unfrozen_[c] > 0) heap_.push_back({slack_[c] / demand_[c], c});
  }
  // Min-heap on level, built bottom-up.
  if (heap_.size() > 1)
    for (size_t i = (heap_.size() - 2) / kArity + 1; i-- > 0;) sift_down(i);
  std::sort(bounded_.begin(), bounded_.end(), [](const Level& a, const Level& b) {
    return a.lambda != b.lambda ? a.lambda < b.lambda : a.index < b.index;
  });

  double lambda = 0.0;  // the common fill level: unfrozen variable v runs at lambda / weight_v
  size_t next_bound = 0;
  for (;;) {
    // Settle the top: drop constraints that are done, re-queue those whose level has risen.
    double top_level = MaxMinProblem::kUnbounded;
    while (!heap_.empty()) {
      const uint32_t c = heap_.front().index;
      if (saturated_[c] || unfrozen_[c] == 0) {
        pop_top();
        continue;
      }
      const double level = fill_level(p, c);
      if (level > heap_.front().lambda) {
        heap_.front().lambda = level;
        sift_down(0);
        continue;
      }
      top_level = level;
      break;
    }
    while (next_bound < bounded_.size() && frozen_[bounded_[next_bound].index]) ++next_bound;
    const bool have_c = !heap_.empty(), have_b = next_bound < bounded_.size();
    if (!have_c && !have_b) break;

    if (have_b && (!have_c || bounded_[next_bound].lambda <= top_level)) {
      // A variable reaches its bound first: it stops there, exactly at its bound.
      const uint32_t v = bounded_[next_bound++].index;
      lambda = std::max(lambda, bounded_[next_bound - 1].lambda);
      freeze(p, v, p.bound(v), rates);
    } else {
      // A constraint fills up: all its unfrozen variables stop at this level.
      const uint32_t c = heap_.front().index;
      lambda = std::max(lambda, top_level);
      pop_top();
      saturated_[c] = 1;
      for (uint32_t k = con_offsets_[c]; k < con_offsets_[c + 1]; ++k) {
        const uint32_t v = con_vars_[k];
        if (!frozen_[v]) freeze(p, v, lambda / p.weight(v), rates);
      }
    }
  }
}

std::vector<double> solve_maxmin(const MaxMinProblem& p) {
  MaxMinSolver solver;
  std::vector<double> rates;
  solver.solve(p, rates);
  return rates;
}

}  // namespace trainsim::sim::flow
