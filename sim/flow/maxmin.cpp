#include "sim/flow/maxmin.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace trainsim::sim::flow {

std::vector<double> solve_maxmin(const MaxMinProblem& p) {
  const size_t nv = p.uses.size(), nc = p.capacity.size();
  auto weight = [&](size_t i) { return p.weight.empty() ? 1.0 : p.weight[i]; };
  auto bound = [&](size_t i) { return p.bound.empty() ? MaxMinProblem::kUnbounded : p.bound[i]; };
  auto usage = [&](size_t i, size_t k) { return p.usage.empty() || p.usage[i].empty() ? 1.0 : p.usage[i][k]; };

  std::vector<double> rate(nv, 0.0);
  std::vector<uint8_t> frozen(nv, 0);
  std::vector<double> remaining(p.capacity);
  // Sum over unfrozen variables of usage / weight, per constraint: the speed at which a
  // constraint fills as lambda grows.
  std::vector<double> demand(nc, 0.0);
  std::vector<std::vector<uint32_t>> vars_of(nc);
  size_t left = 0;
  for (size_t i = 0; i < nv; ++i) {
    TRAINSIM_ASSERT(weight(i) > 0.0, "flow weight must be positive");
    if (p.uses[i].empty()) {
      rate[i] = bound(i);
      frozen[i] = 1;
      continue;
    }
    ++left;
    for (size_t k = 0; k < p.uses[i].size(); ++k) {
      const uint32_t c = p.uses[i][k];
      TRAINSIM_ASSERT(c < nc, "unknown constraint ", c);
      demand[c] += usage(i, k) / weight(i);
      vars_of[c].push_back(static_cast<uint32_t>(i));
    }
  }
  double lambda = 0.0;  // common fill level: unfrozen variable i runs at lambda / w_i
  std::vector<uint8_t> saturated(nc, 0);
  while (left > 0) {
    // The next event: a constraint filling up, or a variable reaching its bound.
    double step = MaxMinProblem::kUnbounded;
    for (size_t c = 0; c < nc; ++c)
      if (!saturated[c] && demand[c] > 0.0) step = std::min(step, std::max(remaining[c], 0.0) / demand[c]);
    for (size_t i = 0; i < nv; ++i)
      if (!frozen[i] && bound(i) < MaxMinProblem::kUnbounded) step = std::min(step, bound(i) * weight(i) - lambda);
    TRAINSIM_ASSERT(step < MaxMinProblem::kUnbounded, "unbounded max-min problem");
    step = std::max(step, 0.0);
    lambda += step;
    for (size_t c = 0; c < nc; ++c)
      if (!saturated[c]) remaining[c] -= step * demand[c];
    // Freeze what hit its limit (relative tolerance keeps ties together deterministically).
    auto freeze = [&](size_t i) {
      frozen[i] = 1;
      rate[i] = lambda / weight(i);
      --left;
      for (size_t k = 0; k < p.uses[i].size(); ++k) demand[p.uses[i][k]] -= usage(i, k) / weight(i);
    };
    for (size_t c = 0; c < nc; ++c) {
      if (saturated[c] || demand[c] <= 0.0) continue;
      if (remaining[c] <= 1e-9 * std::max(p.capacity[c], 1.0)) {
        saturated[c] = 1;
        for (const uint32_t i : vars_of[c])
          if (!frozen[i]) freeze(i);
      }
    }
    for (size_t i = 0; i < nv; ++i)
      if (!frozen[i] && bound(i) * weight(i) <= lambda * (1 + 1e-12)) freeze(i);
  }
  return rate;
}

}  // namespace trainsim::sim::flow
