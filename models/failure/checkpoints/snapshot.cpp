// Snapshot then persist (CheckFreq, Megatron-Core's async save, torch.distributed.checkpoint's
// async_save): training stalls only while each GPU copies its share to host memory; host threads
// then write it to the persistent tier while training goes on. Until the write completes, a
// failure falls back to the previous checkpoint, and the next checkpoint waits for it.
#include "models/failure/checkpoint.hpp"

namespace trainsim::models::failure {
namespace {
CheckpointStrategyInfo snapshot_strategy() {
  return {"snapshot", "training stalls for the copy to host memory; the write to storage runs in the background",
          [](const CheckpointInput& in) {
            CheckpointCosts c;
            c.write = storage_write_time(in);
            c.snapshot = snapshot_time(in);
            c.stall = c.snapshot;
            c.persist = c.write;
            c.restore = storage_read_time(in);
            return c;
          }};
}
}  // namespace
}  // namespace trainsim::models::failure

TRAINSIM_REGISTER_CHECKPOINT(snapshot, ::trainsim::models::failure::snapshot_strategy())
