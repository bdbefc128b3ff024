#include "planner/search/pareto.hpp"

#include <algorithm>
#include <limits>

namespace trainsim::planner::search {

std::vector<size_t> pareto_time_memory(std::vector<TimeMemory> points,
                                       const std::function<bool(size_t, size_t)>& before) {
  std::sort(points.begin(), points.end(), [&](const TimeMemory& a, const TimeMemory& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.memory != b.memory) return a.memory < b.memory;
    return before(a.index, b.index);
  });
  std::vector<size_t> out;
  double best_memory = std::numeric_limits<double>::infinity();
  for (const TimeMemory& p : points) {
    // Sorted by time: a point is on the front when it needs strictly less memory than every
    // faster (or equally fast, earlier) point.
    if (p.memory < best_memory) {
      out.push_back(p.index);
      best_memory = p.memory;
    }
  }
  return out;
}

}  // namespace trainsim::planner::search
