// Synchronous checkpointing (Megatron-LM's default save): training stops until the state is on
// the persistent tier, which can be restored from at once.
#include "models/failure/checkpoint.hpp"

namespace trainsim::models::failure {
namespace {
CheckpointStrategyInfo sync_strategy() {
  return {"sync", "training stops until the checkpoint is written to the persistent tier",
          [](const CheckpointInput& in) {
            CheckpointCosts c;
            c.write = storage_write_time(in);
            c.snapshot = snapshot_time(in);
            // The device-to-host copy streams into the write: the slower of the two sets the pace.
            c.stall = std::max(c.write, c.snapshot);
            c.restore = storage_read_time(in);
            return c;
          }};
}
}  // namespace
}  // namespace trainsim::models::failure

TRAINSIM_REGISTER_CHECKPOINT(sync, ::trainsim::models::failure::sync_strategy())
