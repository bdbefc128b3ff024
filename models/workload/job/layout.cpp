#include "models/workload/job/layout.hpp"

#include <cstddef>

namespace trainsim::models::workload {

std::vector<int64_t> uneven_layout(int64_t layers, int64_t vstages) {
  if (vstages <= 1 || layers % vstages == 0) return {};
  // Every middle stage takes ceil(layers / vstages); the first and last share the deficit.
  const int64_t base = (layers + vstages - 1) / vstages;
  const int64_t deficit = base * vstages - layers;
  const int64_t first = base - (deficit + 1) / 2, last = base - deficit / 2;
  if (first < 1 || last < 1) return {};
  std::vector<int64_t> out(static_cast<size_t>(vstages), base);
  out.front() = first;
  out.back() = last;
  return out;
}

}  // namespace trainsim::models::workload
