// 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s runs p-s-1 warm-up forwards, then
// alternates one forward and one backward, then drains. At most p-s micro-batches in flight.
#include <algorithm>

#include "models/schedules/schedule.hpp"

namespace trainsim::models::schedules {
namespace {
StageOrders one_f_one_b(int stages, int microbatches, const ScheduleParams&) {
  StageOrders orders(static_cast<size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    auto& o = orders[static_cast<size_t>(s)];
    const int warmup = std::min(stages - s - 1, microbatches);
    int next_f = 0, next_b = 0;
    for (; next_f < warmup; ++next_f) o.push_back(Op{OpType::kF, next_f, 0});
    while (next_f < microbatches) {
      o.push_back(Op{OpType::kF, next_f++, 0});
      o.push_back(Op{OpType::kB, next_b++, 0});
    }
    while (next_b < microbatches) o.push_back(Op{OpType::kB, next_b++, 0});
  }
  return orders;
}
}  // namespace
}  // namespace trainsim::models::schedules

TRAINSIM_REGISTER_SCHEDULE(one_f_one_b, "1f1b", false,
                           "1F1B (PipeDream-Flush): warm-up, one-forward-one-backward, drain; <= p in flight",
                           ::trainsim::models::schedules::one_f_one_b)
