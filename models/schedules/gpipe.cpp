// GPipe (Huang et al. 2019): every micro-batch's forward, then every backward in reverse order.
// All m activations are in flight at once; bubble (p-1)/(m+p-1) of the step.
#include "models/schedules/schedule.hpp"

namespace trainsim::models::schedules {
namespace {
StageOrders gpipe(int stages, int microbatches, const ScheduleParams&) {
  StageOrders orders(static_cast<size_t>(stages));
  for (auto& o : orders) {
    for (int mb = 0; mb < microbatches; ++mb) o.push_back(Op{OpType::kF, mb, 0});
    for (int mb = microbatches - 1; mb >= 0; --mb) o.push_back(Op{OpType::kB, mb, 0});
  }
  return orders;
}
}  // namespace
}  // namespace trainsim::models::schedules

TRAINSIM_REGISTER_SCHEDULE(gpipe, "gpipe", false, "GPipe: all forwards then all backwards; m micro-batches in flight",
                           ::trainsim::models::schedules::gpipe)
