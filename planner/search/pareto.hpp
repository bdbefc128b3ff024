#pragma once
// Pareto fronts of two quantities to minimise: estimated iteration time vs peak memory per GPU
// (which plan is fastest for a memory budget), and time vs GPUs (what more GPUs buy).

#include <cstddef>
#include <functional>
#include <vector>

namespace trainsim::planner::search {

struct TimeMemory {
  double time = 0, memory = 0;  // both minimised (memory stands for any second cost: GPUs)
  size_t index = 0;             // the caller's
};

// Indices of the points no other point matches or beats in both coordinates, fastest first;
// among equal points the one `before` orders first is kept.
std::vector<size_t> pareto_time_memory(std::vector<TimeMemory> points,
                                       const std::function<bool(size_t, size_t)>& before);

}  // namespace trainsim::planner::search
